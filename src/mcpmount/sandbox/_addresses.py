"""Which hosts and addresses a sandbox's proxy may connect to.

A name on the allow-list says nothing about where it leads: ``localhost``, a name whose
DNS record an attacker controls, or ``metadata.internal`` can each resolve to this
machine's loopback, the private network or the cloud's metadata service. So the proxy
resolves each allowed name once (`resolve`), keeps only the addresses that are public
(`classify` says why one is not) or are themselves on the list, and connects to exactly
those: no second lookup that a short-lived DNS record could answer differently.

`classify` does not trust ``ipaddress``'s ``is_global`` alone: on Python 3.11 it calls
``::127.0.0.1``, ``2002:7f00:1::`` (6to4) and ``fec0::1`` (site-local) global. IPv6 forms
that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that address.
"""

from __future__ import annotations

import contextlib
import socket
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

import anyio

__all__ = ["AllowList", "Refused", "classify", "held_here", "literal", "resolve"]

IPAddress = IPv4Address | IPv6Address

_RESOLVE_TIMEOUT = 10.0
"""How long one name may take to resolve (a resolver that never answers must not hold a
connection, and its file descriptor, for the system's default of minutes)."""

_METADATA = (IPv4Address("169.254.169.254"), IPv6Address("fd00:ec2::254"))
"""The cloud instance-metadata service (AWS, GCP, Azure; AWS's IPv6 endpoint)."""
_SHARED = IPv4Network("100.64.0.0/10")
"""Carrier-grade NAT (RFC 6598): not private by ``ipaddress``, not public either."""
_PRIVATE = (
    IPv4Network("10.0.0.0/8"),
    IPv4Network("172.16.0.0/12"),
    IPv4Network("192.168.0.0/16"),
    IPv6Network("fc00::/7"),
    IPv6Network("fec0::/10"),
)
_BROADCAST = IPv4Address("255.255.255.255")
_EMBEDDING = (
    (IPv6Network("::ffff:0:0/96"), "IPv4-mapped"),
    (IPv6Network("::/96"), "IPv4-compatible"),
    (IPv6Network("64:ff9b::/96"), "NAT64"),
    (IPv6Network("64:ff9b:1::/48"), "NAT64"),
)


class Refused(Exception):
    """Raised when the proxy must not connect; the message says why (for the 403)."""


def literal(host: str) -> IPAddress | None:
    """Return ``host`` as an address if it is an IP literal (IPv6 with or without brackets)."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if "%" in bare:  # a zone index names an interface of this machine: never a literal here
        return None
    try:
        return ip_address(bare)
    except ValueError:
        return None


def _entry(entry: str) -> tuple[str, tuple[int, ...]]:
    """Split an allow-list entry into its host and the ports it allows."""
    if entry.startswith("["):
        host, _, port = entry[1:].partition("]")
        port = port.removeprefix(":")
    else:
        host, _, port = entry.partition(":")
    return host.lower(), (int(port),) if port else (80, 443)


def _canonical(address: IPAddress) -> IPAddress:
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class AllowList:
    """Hosts a sandbox may reach: ``name`` (ports 443 and 80), ``name:port``, ``*.domain``,
    and addresses (``10.0.0.5``, ``[fd00::1]:8080``), which are the only way to let it reach
    a loopback, private, link-local or other non-public address."""

    def __init__(self, entries: tuple[str, ...]) -> None:
        self._names: list[tuple[str, tuple[int, ...]]] = []
        self._addresses: list[tuple[IPAddress, tuple[int, ...]]] = []
        for entry in entries:
            host, ports = _entry(entry)
            address = literal(host)
            if address is None:
                self._names.append((host, ports))
            else:
                self._addresses.append((_canonical(address), ports))

    def allows_name(self, host: str, port: int) -> bool:
        """Return whether the name ``host`` is on the list for ``port`` (without case)."""
        host = host.lower().rstrip(".")
        return any(
            port in ports and (host == name or (name.startswith("*.") and host.endswith(name[1:])))
            for name, ports in self._names
        )

    def lists_address(self, address: IPAddress, port: int) -> bool:
        """Return whether ``address`` itself is on the list for ``port``."""
        address = _canonical(address)
        return any(port in ports and address == listed for listed, ports in self._addresses)


def classify(address: IPAddress) -> str | None:
    """Say what kind of non-public address ``address`` is (``a loopback address``), or None.

    The kinds: unspecified, loopback, link-local (and the cloud metadata address),
    multicast, broadcast, private (RFC 1918, ``fc00::/7``, site-local), shared (CGNAT,
    ``100.64.0.0/10``) and reserved (documentation, benchmarking, ``240.0.0.0/4``, IETF
    protocol ranges: whatever else ``ipaddress`` does not call global).
    """
    if isinstance(address, IPv6Address) and address.scope_id:
        address = IPv6Address(str(address).partition("%")[0])
    if isinstance(address, IPv6Address) and not (address.is_unspecified or address.is_loopback):
        for network, form in _EMBEDDING:
            if address in network:
                inner = IPv4Address(int(address) & 0xFFFFFFFF)
                kind = classify(inner)
                return f"an {form} form of {inner}, {kind}" if kind else None
        if address.sixtofour is not None:
            kind = classify(address.sixtofour)
            if kind:
                return f"a 6to4 form of {address.sixtofour}, {kind}"
    if address.is_unspecified:
        return "the unspecified address"
    if address in _METADATA:
        return "the cloud metadata address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address == _BROADCAST:
        return "the broadcast address"
    if address in _SHARED:
        return "a shared (CGNAT) address"
    if any(address in network for network in _PRIVATE):
        return "a private address"
    if not address.is_global or address.is_reserved:
        return "a reserved address"
    return None


def held_here(address: IPAddress) -> bool:
    """Return whether this machine holds ``address`` (a public address of its own).

    Binding to it succeeds only if it does: a service listening on every interface is
    reachable through it as through loopback. (Where ``ip_nonlocal_bind`` is on, every
    address binds, so every address counts as held: refused, never let through.)
    """
    family = socket.AF_INET6 if isinstance(address, IPv6Address) else socket.AF_INET
    with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((str(address), 0))
        return True
    return False


def _bracketed(address: IPAddress, port: int) -> str:
    return f"[{address}]:{port}" if isinstance(address, IPv6Address) else f"{address}:{port}"


async def resolve(allow: AllowList, host: str, port: int) -> list[IPAddress]:
    """Return the addresses ``host:port`` may be reached at, in the resolver's order.

    An IP literal must be on the list itself. A listed name is resolved once; each of its
    addresses is kept if it is public or itself on the list.

    Raises:
        Refused: If the host is not on the list, or each of its addresses is refused.
        OSError: If the name cannot be resolved (in time).
    """
    address = literal(host)
    if address is not None:
        if allow.lists_address(address, port):
            return [address]
        raise Refused("it is not in the server's network list")
    if not allow.allows_name(host, port):
        raise Refused("it is not in the server's network list")
    try:
        with anyio.fail_after(_RESOLVE_TIMEOUT):
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except TimeoutError:
        raise OSError(f"resolving {host} took over {_RESOLVE_TIMEOUT:.0f} s") from None
    found: list[IPAddress] = []
    for info in infos:
        candidate = ip_address(str(info[4][0]))
        if candidate not in found:
            found.append(candidate)
    kept: list[IPAddress] = []
    why = ""
    for candidate in found:
        kind = classify(candidate) or (held_here(candidate) and "an address of this machine")
        if not kind or allow.lists_address(candidate, port):
            kept.append(candidate)
        elif not why:
            why = (
                f"it resolves to {candidate}, {kind}; list the address itself "
                f'("{_bracketed(_canonical(candidate), port)}") to allow it'
            )
    if not kept:
        raise Refused(why or f"{host} has no address")
    return kept
