"""Time-zone and unit conversions over stdio.

Run: `python examples/servers/clock.py`. Time zones are IANA names ("Europe/Paris", "UTC").
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

server = MCPServer("clock", version="1.0.0", instructions="Current time, time zones and units.")

Zone = Annotated[str, Field(description='An IANA time zone such as "America/New_York" or "UTC".')]


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(
            f"unknown time zone {name!r}; use an IANA name like 'Europe/Paris'"
        ) from None


@server.tool()
def now(timezone: Zone = "UTC") -> str:
    """The current date and time in a time zone, as ISO 8601 with its UTC offset."""
    return datetime.now(zone(timezone)).isoformat(timespec="seconds")


@server.tool()
def convert_time(
    time: Annotated[
        str, Field(description='Local time, "HH:MM" (today) or ISO "YYYY-MM-DDTHH:MM".')
    ],
    from_timezone: Zone,
    to_timezone: Zone,
) -> str:
    """Convert a wall-clock time from one time zone to another (daylight saving aware)."""
    try:
        if "T" in time:
            naive = datetime.fromisoformat(time)
        else:
            hour, minute = (int(part) for part in time.split(":"))
            naive = datetime.now().replace(hour=hour, minute=minute, second=0, microsecond=0)
    except ValueError:
        raise ToolError(f"cannot read time {time!r}; use HH:MM or YYYY-MM-DDTHH:MM") from None
    source = naive.replace(tzinfo=zone(from_timezone))
    return source.astimezone(zone(to_timezone)).isoformat(timespec="minutes")


# Factors to one base unit per dimension; temperature is affine and handled separately.
LENGTH = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048,
          "yd": 0.9144, "mi": 1609.344}  # fmt: skip
MASS = {"g": 0.001, "kg": 1.0, "t": 1000.0, "oz": 0.028349523125, "lb": 0.45359237}
VOLUME = {"ml": 0.001, "l": 1.0, "tsp": 0.00492892159375, "tbsp": 0.01478676478125,
          "cup": 0.2365882365, "gal": 3.785411784}  # fmt: skip
TEMPERATURE = ("c", "f", "k")

Unit = Literal[
    "mm", "cm", "m", "km", "in", "ft", "yd", "mi",
    "g", "kg", "t", "oz", "lb",
    "ml", "l", "tsp", "tbsp", "cup", "gal",
    "c", "f", "k",
]  # fmt: skip


def to_kelvin(value: float, unit: str) -> float:
    return {"c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15, "k": value}[unit]


def from_kelvin(value: float, unit: str) -> float:
    return {"c": value - 273.15, "f": (value - 273.15) * 9 / 5 + 32, "k": value}[unit]


@server.tool()
def convert_units(value: float, from_unit: Unit, to_unit: Unit) -> float:
    """Convert a quantity between units of length, mass, volume (US cups/gallons) or temperature.

    Units: mm cm m km in ft yd mi | g kg t oz lb | ml l tsp tbsp cup gal | c f k.
    """
    if from_unit in TEMPERATURE and to_unit in TEMPERATURE:
        return round(from_kelvin(to_kelvin(value, from_unit), to_unit), 6)
    for table in (LENGTH, MASS, VOLUME):
        if from_unit in table and to_unit in table:
            return round(value * table[from_unit] / table[to_unit], 9)
    raise ToolError(f"cannot convert {from_unit} to {to_unit}: different kinds of quantity")


if __name__ == "__main__":
    server.run()
