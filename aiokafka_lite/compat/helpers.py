"""aiokafka's ``aiokafka.helpers``."""

from __future__ import annotations

import ssl


def create_ssl_context(*, cafile: str | None = None, capath: str | None = None, cadata: str | None = None,
                       certfile: str | None = None, keyfile: str | None = None, password: str | None = None,
                       crlfile: str | None = None) -> ssl.SSLContext:
    """aiokafka.helpers.create_ssl_context: a client context that verifies the broker (host name included)
    against the given CAs, with a client certificate when ``certfile`` is given."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile, capath=capath,
                                         cadata=cadata)
    if crlfile is not None:
        context.load_verify_locations(crlfile)
        context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if certfile is not None:
        context.load_cert_chain(certfile, keyfile, password)
    return context


__all__ = ["create_ssl_context"]
