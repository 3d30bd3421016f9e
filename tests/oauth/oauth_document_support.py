"""A client id metadata document served over https from 127.0.0.1, with a self-signed
certificate for the authorization server to trust.

Import it as ``oauth.oauth_document_support``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc


@dataclass
class DocumentHost:
    """An https server on 127.0.0.1 serving one client id metadata document at `url`.

    Its certificate is self-signed for 127.0.0.1 (`certificate`, PEM), for the authorization
    server to trust; `fetches` counts the GETs of the document.
    """

    url: str
    certificate: Path
    fetches: int = 0


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1, valid for a day, in `directory`."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "host.pem", directory / "host.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@asynccontextmanager
async def document_host(directory: Path, document: dict[str, Any]) -> AsyncGenerator[DocumentHost]:
    """Serve `document` over https at `https://127.0.0.1:PORT/mcpmount-client.json`; the
    document's `client_id` is set to that URL, as the draft requires."""
    import ssl

    from anyio.streams.tls import TLSListener

    cert, key = _self_signed(directory)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    tcp = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = tcp.extra(anyio.abc.SocketAttribute.local_port)
    host = DocumentHost(f"https://127.0.0.1:{port}/mcpmount-client.json", cert)
    body = json.dumps({**document, "client_id": host.url}).encode()

    async def answer(stream: anyio.abc.ByteStream) -> None:
        async with stream:
            request = b""
            with anyio.move_on_after(10):
                try:
                    while b"\r\n\r\n" not in request:
                        request += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError, ssl.SSLError):
                    return
                found = request.startswith(b"GET /mcpmount-client.json ")
                host.fetches += found
                status, content = (b"200 OK", body) if found else (b"404 Not Found", b"{}")
                await stream.send(
                    b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
                    b"content-length: " + str(len(content)).encode() + b"\r\n"
                    b"connection: close\r\n\r\n" + content
                )

    listener = TLSListener(tcp, context, standard_compatible=False)
    async with listener, anyio.create_task_group() as tasks:
        tasks.start_soon(listener.serve, answer)
        try:
            yield host
        finally:
            tasks.cancel_scope.cancel()
