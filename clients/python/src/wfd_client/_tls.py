"""TLS credentials from PEM files, and the call metadata of bearer tokens and namespaces."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

import grpc


def tls_credentials(
    ca_file: str | None = None, cert_file: str | None = None, key_file: str | None = None
) -> grpc.ChannelCredentials:
    """Channel credentials for TLS from PEM files: ``ca_file`` holds the CAs
    to verify the server against (None: grpc's default roots), ``cert_file``
    and ``key_file`` a client certificate for mutual TLS (both or neither).
    Pass them as ``credentials=`` to a client or a worker."""
    if (cert_file is None) != (key_file is None):
        raise ValueError("tls_credentials: cert_file and key_file go together")

    def read(f: str | None) -> bytes | None:
        if f is None:
            return None
        with open(f, "rb") as fh:
            return fh.read()

    return grpc.ssl_channel_credentials(
        root_certificates=read(ca_file), private_key=read(key_file), certificate_chain=read(cert_file)
    )


def is_loopback_target(target: str) -> bool:
    """Whether a gRPC target names this machine: a unix socket, localhost or
    a loopback IP address (127.0.0.0/8, ::1), with or without a
    ``dns:///`` or ``ipv4:``/``ipv6:`` scheme."""
    if target.startswith(("unix:", "unix-abstract:")):
        return True
    target = re.sub(r"^(dns|passthrough|ipv4|ipv6):(//[^/]*/)?", "", target)
    host = target
    m = re.fullmatch(r"\[(.*)\](:\d+)?", target)
    if m:
        host = m.group(1)
    elif target.count(":") == 1:
        host = target.rsplit(":", 1)[0]
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def with_token(
    target: str, token: str | None, secure: bool, metadata: Sequence[tuple[str, str]] | None
) -> tuple[tuple[str, str], ...]:
    """``metadata`` plus ``authorization: Bearer <token>``; a token goes only
    over TLS, or in plaintext to a loopback target (a local server, or a mesh
    sidecar that adds TLS): ValueError otherwise."""
    md = tuple(metadata or ())
    if token is None:
        return md
    if not secure and not is_loopback_target(target):
        raise ValueError(
            f"a bearer token is sent only over TLS (credentials=) or in plaintext to a loopback address, not to {target}"
        )
    return (*md, ("authorization", f"Bearer {token}"))


NAMESPACE_HEADER = "wfd-namespace"
_NAMESPACE = re.compile(r"[a-z](?:[a-z0-9-]{0,46}[a-z0-9])?")


def with_namespace(metadata: tuple[tuple[str, str], ...], namespace: str | None) -> tuple[tuple[str, str], ...]:
    """``metadata`` plus the header that puts every call in ``namespace``
    (None: the server's "default"); ValueError for a name that cannot be a
    namespace's (1 to 48 of a-z 0-9 -, starting with a letter, not ending
    with -)."""
    if namespace is None:
        return metadata
    if not _NAMESPACE.fullmatch(namespace):
        raise ValueError(
            f"{namespace!r} is not a namespace (1 to 48 of a-z 0-9 -, starting with a letter, not ending with -)"
        )
    return (*metadata, (NAMESPACE_HEADER, namespace))
