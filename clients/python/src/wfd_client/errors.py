"""Errors raised by the wfd client: one class per gRPC status code.

Every failed call raises a :class:`WfdError` subclass that carries the
call's :class:`grpc.StatusCode` (``err.code``) and the server's message
(``err.message``). Catch the subclass for one code (``except NotFound``) or
:class:`WfdError` for any.
"""

from __future__ import annotations

from typing import Any, ClassVar

import grpc
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, duration_pb2, message_factory

__all__ = [
    "WfdError",
    "Cancelled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
    "error_for",
    "from_rpc_error",
]


class WfdError(Exception):
    """A call failed with a gRPC status.

    ``code`` is the status code, ``message`` the server's message (or the
    client's, for input it refused before calling). ``details`` are the
    ``google.rpc.Status`` details the server attached (``Any`` messages);
    ``retry_delay`` is the pause in seconds of a ``google.rpc.RetryInfo``
    among them (the server sends one with UNAVAILABLE), else None.
    """

    code: grpc.StatusCode
    message: str
    details: tuple[any_pb2.Any, ...]
    retry_delay: float | None

    #: The code of a subclass; None on WfdError itself.
    CODE: ClassVar[grpc.StatusCode | None] = None

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        details: tuple[any_pb2.Any, ...] = (),
    ) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.details = tuple(details)
        self.retry_delay = _retry_delay(self.details)

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!s}, {self.message!r})"


class Cancelled(WfdError):
    """The call was cancelled (by the caller, by closing the client, or by the peer)."""

    CODE = grpc.StatusCode.CANCELLED


class Unknown(WfdError):
    CODE = grpc.StatusCode.UNKNOWN


class InvalidArgument(WfdError):
    """A bad request: a malformed field, or an event type the handler does not take."""

    CODE = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceeded(WfdError):
    """The call's timeout passed (it covers the client's retries)."""

    CODE = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFound(WfdError):
    """An unknown handler or workflow."""

    CODE = grpc.StatusCode.NOT_FOUND


class AlreadyExists(WfdError):
    """A handler id already used by a handler of another workflow."""

    CODE = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(WfdError):
    CODE = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhausted(WfdError):
    CODE = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPrecondition(WfdError):
    """An event to a finished handler, or a release of a handler that is not idle."""

    CODE = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(WfdError):
    CODE = grpc.StatusCode.ABORTED


class OutOfRange(WfdError):
    CODE = grpc.StatusCode.OUT_OF_RANGE


class Unimplemented(WfdError):
    CODE = grpc.StatusCode.UNIMPLEMENTED


class Internal(WfdError):
    CODE = grpc.StatusCode.INTERNAL


class Unavailable(WfdError):
    """No connection, a dropped connection, a server shutting down or a store
    that is unavailable. The client has already retried it."""

    CODE = grpc.StatusCode.UNAVAILABLE


class DataLoss(WfdError):
    """Corrupt stored data."""

    CODE = grpc.StatusCode.DATA_LOSS


class Unauthenticated(WfdError):
    CODE = grpc.StatusCode.UNAUTHENTICATED


_BY_CODE: dict[grpc.StatusCode, type[WfdError]] = {
    cls.CODE: cls
    for cls in (
        Cancelled,
        Unknown,
        InvalidArgument,
        DeadlineExceeded,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        ResourceExhausted,
        FailedPrecondition,
        Aborted,
        OutOfRange,
        Unimplemented,
        Internal,
        Unavailable,
        DataLoss,
        Unauthenticated,
    )
    if cls.CODE is not None
}


def error_for(
    code: grpc.StatusCode, message: str, *, details: tuple[any_pb2.Any, ...] = ()
) -> WfdError:
    """Returns the WfdError subclass instance for code (WfdError itself for OK)."""
    return _BY_CODE.get(code, WfdError)(code, message, details=details)


_DETAILS_KEY = "grpc-status-details-bin"


def from_rpc_error(err: grpc.RpcError) -> WfdError:
    """Converts a grpcio error (sync or grpc.aio) into a WfdError subclass."""
    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN
    message = str(err)
    trailing: Any = None
    # grpc.RpcError itself has no methods; the errors grpcio raises are also
    # grpc.Call (sync) or grpc.aio.AioRpcError, which have these.
    if hasattr(err, "code"):
        code = err.code()
    if hasattr(err, "details"):
        message = err.details() or ""
    if hasattr(err, "trailing_metadata"):
        trailing = err.trailing_metadata()
    return error_for(code, message, details=_status_details(trailing))


# google.rpc.Status and google.rpc.RetryInfo are not part of the protobuf
# runtime. Rather than depend on googleapis-common-protos for two messages,
# the client declares them in a private descriptor pool (so they cannot
# clash with that package's classes if the application uses it).
def _rpc_messages() -> tuple[type[Any], type[Any]]:
    pool = descriptor_pool.DescriptorPool()
    for dep in (any_pb2, duration_pb2):
        fd = descriptor_pb2.FileDescriptorProto()
        dep.DESCRIPTOR.CopyToProto(fd)
        pool.Add(fd)
    f = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(
        name="wfd_client/google_rpc.proto",
        package="google.rpc",
        syntax="proto3",
        dependency=["google/protobuf/any.proto", "google/protobuf/duration.proto"],
    )
    status = fd.message_type.add(name="Status")
    status.field.add(name="code", number=1, type=f.TYPE_INT32, label=f.LABEL_OPTIONAL)
    status.field.add(name="message", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    status.field.add(
        name="details", number=3, type=f.TYPE_MESSAGE, label=f.LABEL_REPEATED,
        type_name=".google.protobuf.Any",
    )
    retry = fd.message_type.add(name="RetryInfo")
    retry.field.add(
        name="retry_delay", number=1, type=f.TYPE_MESSAGE, label=f.LABEL_OPTIONAL,
        type_name=".google.protobuf.Duration",
    )
    pool.Add(fd)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.Status")),
        message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.RetryInfo")),
    )


_Status, _RetryInfo = _rpc_messages()
_RETRY_INFO_URL = "type.googleapis.com/google.rpc.RetryInfo"


def _status_details(trailing: Any) -> tuple[any_pb2.Any, ...]:
    if not trailing:
        return ()
    for item in trailing:
        key, value = item[0], item[1]
        if key == _DETAILS_KEY and isinstance(value, bytes):
            st = _Status()
            try:
                st.ParseFromString(value)
            except Exception:  # a malformed trailer is no reason to lose the error
                return ()
            return tuple(any_pb2.Any(type_url=d.type_url, value=d.value) for d in st.details)
    return ()


def _retry_delay(details: tuple[any_pb2.Any, ...]) -> float | None:
    for d in details:
        if d.type_url == _RETRY_INFO_URL:
            info = _RetryInfo()
            try:
                info.ParseFromString(d.value)
            except Exception:
                continue
            delay: duration_pb2.Duration = info.retry_delay
            return float(delay.seconds) + delay.nanos / 1e9
    return None
