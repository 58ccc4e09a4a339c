"""Java key and trust stores (``kafka.ssl.truststore.*`` / ``kafka.ssl.keystore.*``) read as PEM text.

Spark Kafka jobs name their TLS material the Java way: a truststore of CA certificates and a keystore with
the client's key and certificate chain, as PEM, PKCS12 or JKS files (or PEM inline, KIP-651). PKCS12 is
read with the ``cryptography`` package; JKS, Java's own format, is converted to PKCS12 by the JDK's
``keytool`` (the Java that runs Spark has it), into a private temporary directory removed at once.

The result is PEM text, because the options travel to the executors by pickling and an ``ssl.SSLContext``
does not pickle; each process builds its context from the text (porting.live_settings).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["keystore_pem", "store_type", "truststore_pem"]

_TYPES = ("PEM", "PKCS12", "JKS")
_CERT = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\s*", re.S)
_KEY = re.compile(r"-----BEGIN ((?:ENCRYPTED |RSA |EC )?PRIVATE KEY)-----.+?-----END \1-----\s*", re.S)


def store_type(option: str, value: str | None, location: str | None) -> str:
    """The store's type: as given, else guessed from the file name as Java does not (it defaults to JKS
    before Java 9, PKCS12 after): ``.pem``/``.crt`` PEM, ``.jks`` JKS, anything else PKCS12."""
    if value:
        kind = value.strip().upper()
        if kind not in _TYPES:
            raise ConfigError(f"option {option!r}={value!r} is not supported: give PEM, PKCS12 or JKS")
        return kind
    suffix = Path(location or "").suffix.lower()
    return "PEM" if suffix in (".pem", ".crt", ".cer") else "JKS" if suffix == ".jks" else "PKCS12"


def _read(option: str, location: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise ConfigError(f"option {option!r}: cannot read {location!r}: {exc}") from None


def _keytool() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "keytool").exists():
        return str(Path(home) / "bin" / "keytool")
    found = shutil.which("keytool")
    if found is None:
        raise ConfigError("a JKS store needs the JDK's keytool (on PATH or in $JAVA_HOME/bin) to be read; "
                          "or convert it once: keytool -importkeystore -deststoretype PKCS12")
    return found


def _jks_to_pkcs12(option: str, location: str, password: str) -> bytes:
    """The JKS file as PKCS12 bytes, converted by keytool in a private directory removed afterwards."""
    if not password:
        raise ConfigError(f"option {option!r}: a JKS store needs its password to be converted")
    tmp = tempfile.mkdtemp(prefix="aiokafka-lite-store-")
    try:
        out = Path(tmp) / "store.p12"
        cmd = [_keytool(), "-importkeystore", "-noprompt", "-srckeystore", location, "-srcstoretype", "JKS",
               "-destkeystore", str(out), "-deststoretype", "PKCS12"]
        # Passwords go through the environment, not the command line (which other users can read).
        env = {**os.environ, "ALK_STORE_PASS": password}
        cmd += ["-srcstorepass:env", "ALK_STORE_PASS", "-deststorepass:env", "ALK_STORE_PASS"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            why = (done.stderr or done.stdout).strip().splitlines()
            raise ConfigError(f"option {option!r}: keytool could not read {location!r} as JKS: "
                              f"{why[-1] if why else done.returncode}")
        return out.read_bytes()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _pkcs12(option: str, data: bytes, password: str | None) -> _Loaded:
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        key, cert, extra = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError as exc:
        raise ConfigError(f"option {option!r}: cannot open the PKCS12 store (wrong password, or not "
                          f"PKCS12): {exc}") from None
    return key, cert, list(extra)


def _pem_certs(certs: list[Any]) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding

    return "".join(c.public_bytes(Encoding.PEM).decode() for c in certs if c is not None)


_Loaded = tuple[Any, Any, list[Any]]  # (private key or None, certificate or None, other certificates)


def _binary(option: str, kind: str, location: str, password: str | None) -> _Loaded:
    data = _jks_to_pkcs12(option, location, password or "") if kind == "JKS" else _read(option, location)
    return _pkcs12(option, data, password)


def truststore_pem(option: str, kind: str, location: str | None, password: str | None,
                   inline: str | None) -> str:
    """The CA certificates of a truststore as PEM text."""
    if inline is not None:
        return inline
    if location is None:
        raise ConfigError(f"option {option!r} needs ssl.truststore.location (or ssl.truststore.certificates)")
    if kind == "PEM":
        try:
            return Path(location).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"option {option!r}: cannot read {location!r} as a PEM file: {exc}") from None
    _key, cert, extra = _binary(option, kind, location, password)
    text = _pem_certs([cert, *extra])
    if not text:
        raise ConfigError(f"option {option!r}: {location!r} holds no certificate")
    return text


def keystore_pem(option: str, kind: str, location: str | None, password: str | None,
                 key_password: str | None, inline_key: str | None, inline_chain: str | None
                 ) -> tuple[str, str]:
    """The client's (certificate chain, private key) of a keystore as PEM text; the key unencrypted, to
    be loaded by each process (porting.live_settings)."""
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        load_pem_private_key,
    )

    if inline_key is not None or inline_chain is not None:
        if not (inline_key and inline_chain):
            raise ConfigError(f"option {option!r}: ssl.keystore.key and ssl.keystore.certificate.chain go "
                              "together")
        chain, key_text = inline_chain, inline_key
    elif location is None:
        raise ConfigError(f"option {option!r} needs ssl.keystore.location (or ssl.keystore.key with "
                          "ssl.keystore.certificate.chain)")
    elif kind == "PEM":
        text = _read(option, location).decode(errors="replace")
        chain = "".join(m.group(0) for m in _CERT.finditer(text))
        found = _KEY.search(text)
        if found is None or not chain:
            raise ConfigError(f"option {option!r}: {location!r} must hold the private key and its "
                              "certificate chain (PEM)")
        key_text = found.group(0)
    else:
        key, cert, extra = _binary(option, kind, location, password)
        if key is None or cert is None:
            raise ConfigError(f"option {option!r}: {location!r} holds no private key with its certificate")
        pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        return _pem_certs([cert, *extra]), pem.decode()
    secret = (key_password or password or "").encode() or None
    try:
        key = load_pem_private_key(key_text.encode(), secret if "ENCRYPTED" in key_text else None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(
            f"option {option!r}: cannot read the private key (ssl.key.password?): {exc}") from None
    return chain, key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
