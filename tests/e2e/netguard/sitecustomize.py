"""Put on PYTHONPATH by the offline test: every Python-level lookup or connection to a host that is not loopback
is appended to $NETGUARD_RECORD and refused."""

import ipaddress
import os
import socket

_RECORD = os.environ.get("NETGUARD_RECORD", "")
_LOCAL_NAMES = {"localhost", "ip6-localhost", "localhost.localdomain", "", None}


def _is_loopback(host):
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _refuse(what, host):
    if _RECORD:
        with open(_RECORD, "a", encoding="utf-8") as out:
            out.write(f"python {what} {host} pid={os.getpid()}\n")
    raise OSError(f"netguard: {what} {host} refused (the test forbids outside network access)")


_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_create_connection = socket.create_connection


def getaddrinfo(host, *args, **kwargs):
    if not _is_loopback(host):
        _refuse("getaddrinfo", host)
    return _getaddrinfo(host, *args, **kwargs)


def _check(sock, address, what):
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
        _refuse(what, address[0])


def connect(self, address):
    _check(self, address, "connect")
    return _connect(self, address)


def connect_ex(self, address):
    _check(self, address, "connect")
    return _connect_ex(self, address)


def create_connection(address, *args, **kwargs):
    if not _is_loopback(address[0]):
        _refuse("create_connection", address[0])
    return _create_connection(address, *args, **kwargs)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.create_connection = create_connection
