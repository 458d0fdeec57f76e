"""Namespaces against a real `wfd serve --namespace acme`: the same handler
id in two namespaces (Client and AsyncClient), a worker serving one, the
namespace list, and a name that cannot be a namespace's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Server, WorkerThread, aconnect, connect, unique, wait_for

import wfd_client as w
from wfd_client import HandlerStatus, NotFound
from wfd_client.worker import Event, StepContext, Workflow

RUNNING = HandlerStatus.Value("HANDLER_STATUS_RUNNING")
COMPLETED = HandlerStatus.Value("HANDLER_STATUS_COMPLETED")


@pytest.fixture(scope="module")
def ns_server(wfd_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    d: Path = tmp_path_factory.mktemp("wfd-namespaces")
    srv = Server(wfd_bin, d / "data", extra_args=["--namespace", "acme=90m"])
    srv.start()
    try:
        yield srv.addr
    finally:
        srv.stop()


def test_same_id_two_namespaces(ns_server: str) -> None:
    hid = unique("same")
    with connect(ns_server) as default, connect(ns_server, namespace="acme") as acme:
        assert acme.namespace == "acme" and default.namespace == "default"
        default.run("approval", {"amount": 1}, handler_id=hid, attributes={"requester": "ada"})
        acme.run("approval", {"amount": 2}, handler_id=hid, attributes={"requester": "bob"})
        assert w.struct_to_dict(default.get(hid).attributes)["requester"] == "ada"
        assert w.struct_to_dict(acme.get(hid).attributes)["requester"] == "bob"
        acme.send(hid, "approval", {"approved": True})
        wait_for(f"acme's {hid} completed", lambda: acme.get(hid).status == COMPLETED)
        assert default.get(hid).status == RUNNING
        names = [(n.name, n.retention.ToSeconds() if n.HasField("retention") else None) for n in acme.namespaces()]
        assert names == [("acme", 5400), ("default", None)]
        assert acme.identity().namespace == "acme"
    with connect(ns_server, namespace="nope") as nope, pytest.raises(NotFound, match='namespace "nope"'):
        nope.get(hid)


async def test_async_client_in_a_namespace(ns_server: str) -> None:
    async with aconnect(ns_server, namespace="acme") as acme:
        h = await acme.run("approval", {"amount": 3})
        assert (await acme.get(h.handler_id)).status == RUNNING
        assert [n.name for n in await acme.namespaces()] == ["acme", "default"]
    with connect(ns_server) as default, pytest.raises(NotFound):
        default.get(h.handler_id)


def test_worker_serves_its_namespace(ns_server: str) -> None:
    wf = Workflow(unique("ns-py"))

    @wf.step(accepts=["start"], emits=["stop"])
    def go(ctx: StepContext, ev: Event) -> None:
        ctx.send("stop", {"ok": True})

    with WorkerThread(ns_server, [wf], namespace="acme"), connect(ns_server, namespace="acme") as acme:
        h = acme.run(wf.name, {})
        wait_for(f"{h.handler_id} completed", lambda: acme.get(h.handler_id).status == COMPLETED)
        with connect(ns_server) as default, pytest.raises(NotFound):
            default.run(wf.name, {})


def test_malformed_namespace_refused() -> None:
    with pytest.raises(ValueError, match="is not a namespace"):
        w.Client("127.0.0.1:1", namespace="Not_One")
