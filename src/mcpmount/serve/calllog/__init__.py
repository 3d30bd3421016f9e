"""The call log: one record per request ``serve`` answers, who asked what and how it ended.

- `CallLog` (``_middleware``): the server middleware that writes the records; the front
  runs it around every request (`RegistryServer.watch`).
- `open_sink` (``_open``): where they go, as the ``[serve]`` table's ``call_log`` (or
  ``--call-log``) says: a JSON-lines file rotated by size, stdout, or OpenTelemetry log
  records (``_sinks``).
- The record (``_record``): its `FIELDS` and `OUTCOMES`, and `DigestKey`, the arguments'
  keyed digest: equal arguments correlate, values are never written.

- `LogTail` and `LogFilter` (``_reading``): what ``mcpmount log`` reads and shows.

Nothing here holds a secret but the digest key, which is never written; a record holds no
token, argument value, result or error message.
"""

from mcpmount.serve.calllog._middleware import CallLog
from mcpmount.serve.calllog._open import open_sink
from mcpmount.serve.calllog._reading import LogFilter, LogTail, rotated_files
from mcpmount.serve.calllog._record import FIELDS, OUTCOMES, DigestKey, Outcome, Record
from mcpmount.serve.calllog._sinks import JsonLinesFile, OtelLogs, Sink, Stdout

__all__ = [
    "FIELDS",
    "OUTCOMES",
    "CallLog",
    "DigestKey",
    "JsonLinesFile",
    "LogFilter",
    "LogTail",
    "OtelLogs",
    "Outcome",
    "Record",
    "Sink",
    "Stdout",
    "open_sink",
    "rotated_files",
]
