"""What a hostile web page, a careless setting or a curious key holder could do (issue 27, items 2, 3 and 6), tried
against the real processes: the Host allow-list and the Origin check of writes, blank secrets refused at start,
/health without a key, and patient imports confined to the import roots."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_stack import CLI, KEY, Api, Stack, environ, free_port, start_worker, wait_settled, wait_until
from test_api_basics import assert_error

pytestmark = pytest.mark.slow
EVIL = "http://evil.example"
PORTAL = "https://portal.example.org"  # the extra API's CORS origin
PORTAL_HOST = "workspace.example.org"  # the extra API's extra allowed host
EVENTS = (
    "event_id,patient_id,timestamp,event_type,sub_type,content\n"
    "{id},P-roots,2150-05-01 08:00:00,lab,Chemistry,Sodium 131 mmol/L (low; ref 135-145)\n"
)


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extra API's one import root."""
    return tmp_path_factory.mktemp("import-root")


@pytest.fixture(scope="module")
def portal_api(
    stack: Stack, roots: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[httpx.Client]:
    """An API and a worker on a data dir and a catalog of their own (what they store stays out of the shared stack;
    on PostgreSQL a database of their own), clients of the stack's Chroma server: CORS for PORTAL, PORTAL_HOST
    allowed, patient imports under `roots`."""
    data_dir = tmp_path_factory.mktemp("portal") / "data"
    common = dict(stack.common)
    if "WORKSPACE_CATALOG__URL" in common:
        cluster = request.getfixturevalue("postgres_cluster")
        common["WORKSPACE_CATALOG__URL"] = cluster.url(cluster.create_database())
    env = environ(**common, WORKSPACE_API__CORS_ORIGINS=PORTAL, WORKSPACE_API__ALLOWED_HOSTS=PORTAL_HOST,
                  WORKSPACE_PATIENTS__IMPORT_ROOTS=str(roots))
    children = [start_worker(data_dir, env)]
    try:
        children.append(api := Api(data_dir, env, "api-portal"))
        api.wait_ready()
        with httpx.Client(base_url=api.url, timeout=120, trust_env=False) as http:
            yield http
    finally:
        for child in reversed(children):
            child.stop()


def workspace_names(client: httpx.Client) -> list[str]:
    return [w["name"] for w in client.get("/workspaces").json()]


# Item 2: Host allow-list (DNS rebinding)

def test_a_host_outside_the_allow_list_is_refused_on_every_route(client: httpx.Client) -> None:
    for host in ("attacker.example", f"attacker.example:{client.base_url.port}", "127.0.0.1.attacker.example"):
        for method, path in (("GET", "/workspaces"), ("GET", "/health"), ("POST", "/workspaces")):
            response = client.request(method, path, headers={"Host": host}, json={"name": "Rebound"})
            message = assert_error(response, 421, "host_not_allowed")
            assert "WORKSPACE_API__ALLOWED_HOSTS" in message and "DNS rebinding" in message
    assert "Rebound" not in workspace_names(client)


def test_loopback_names_with_any_port_are_served(client: httpx.Client) -> None:
    for host in ("localhost", f"localhost:{client.base_url.port}", "127.0.0.1:1", "[::1]:8502", "LOCALHOST"):
        assert client.get("/workspaces", headers={"Host": host}).status_code == 200, host


def test_the_configured_extra_host_is_served_and_no_other(portal_api: httpx.Client) -> None:
    assert portal_api.get("/workspaces", headers={"Host": f"{PORTAL_HOST}:443"}).status_code == 200
    assert_error(portal_api.get("/workspaces", headers={"Host": f"evil.{PORTAL_HOST}"}), 421, "host_not_allowed")


# Item 2: Origin check of writes (cross-site requests)

def test_a_page_of_another_site_cannot_create_upload_or_delete(client: httpx.Client, ready: dict, pdf: Path) -> None:
    evil = {"Origin": EVIL}
    before = client.get("/workspaces/Cardio/documents").json()
    message = assert_error(client.post("/workspaces", json={"name": "Planted"}, headers=evil), 403, "cross_origin")
    assert EVIL in message and "WORKSPACE_API__CORS_ORIGINS" in message
    with pdf.open("rb") as stream:
        upload = client.post("/workspaces/Cardio/documents", headers=evil,
                             files={"file": ("planted.pdf", stream, "application/pdf")})
    assert_error(upload, 403, "cross_origin")
    assert_error(client.delete(f"/workspaces/Cardio/documents/{ready['id']}", headers=evil), 403, "cross_origin")
    assert_error(client.post("/workspaces", json={"name": "Planted"}, headers={"Origin": "null"}), 403, "cross_origin")
    assert "Planted" not in workspace_names(client)
    assert wait_settled(client, "Cardio") == before  # nothing queued, nothing removed
    assert client.get("/workspaces", headers=evil).status_code == 200  # reads are not writes


def test_writes_without_origin_or_from_the_api_itself_pass(client: httpx.Client) -> None:
    own = f"http://127.0.0.1:{client.base_url.port}"
    same_name = {"Origin": f"http://localhost:{client.base_url.port}", "Host": f"localhost:{client.base_url.port}"}
    names = {"From curl": {}, "From docs": {"Origin": own}, "From localhost": same_name}
    try:
        for name, headers in names.items():
            assert client.post("/workspaces", json={"name": name}, headers=headers).status_code == 201, name
        assert set(names) <= set(workspace_names(client))
    finally:  # the other API tests count on the stack's one workspace
        for name in names:
            client.delete(f"/workspaces/{name}")
    assert not set(names) & set(workspace_names(client))


def test_a_key_does_not_let_another_site_write(guarded: httpx.Client) -> None:
    refused = guarded.post("/workspaces", json={"name": "Keyed plant"}, headers={"Origin": EVIL})
    assert_error(refused, 403, "cross_origin")
    assert "Keyed plant" not in workspace_names(guarded)


def test_a_configured_cors_origin_may_write(portal_api: httpx.Client) -> None:
    created = portal_api.post("/workspaces", json={"name": "From portal"}, headers={"Origin": PORTAL})
    assert created.status_code == 201, created.text
    assert created.headers["access-control-allow-origin"] == PORTAL
    assert_error(portal_api.post("/workspaces", json={"name": "Evil"}, headers={"Origin": EVIL}), 403, "cross_origin")


# Item 2: the UI's Streamlit server (its WebSocket carries every page)

def websocket_status(port: int, host: str, origin: str | None = None) -> int:
    """The HTTP status Streamlit answers a WebSocket handshake on /_stcore/stream with (101 = accepted)."""
    lines = [
        "GET /_stcore/stream HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
        *([f"Origin: {origin}"] if origin else []),
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return int(sock.recv(200).split(b" ", 2)[1])


def test_the_ui_refuses_other_hosts_and_origins(stack: Stack, tmp_path: Path) -> None:
    from workspace_app.adapters.supervisor import allowed_hosts, ui_spec

    port = free_port()
    spec = ui_spec(stack.data_dir, stack.common["WORKSPACE_CHROMA_URL"], port, stack.common["WORKSPACE_STORAGE__CHROMA_TOKEN"],
                   hosts=allowed_hosts("127.0.0.1", PORTAL_HOST))
    log = tmp_path / "ui.log"
    with log.open("wb") as out:
        ui = subprocess.Popen(spec.argv, env=environ(**{**stack.common, **spec.env}), cwd=spec.cwd, stdout=out, stderr=out)
    try:
        wait_until(lambda: _answers(f"http://127.0.0.1:{port}/_stcore/health"), 120, "the UI", ui, log)
        assert websocket_status(port, f"127.0.0.1:{port}") == 101
        assert websocket_status(port, f"{PORTAL_HOST}:{port}") == 101
        assert websocket_status(port, f"attacker.example:{port}") == 403  # DNS rebinding
        assert websocket_status(port, f"127.0.0.1:{port}", origin=EVIL) == 403  # another site's page
        assert websocket_status(port, f"localhost:{port}") == 101  # still serving
    finally:
        ui.terminate()
        ui.wait(30)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False


# Item 3: blank secrets and an open UI without a password are refused at start

def start_refused(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    data_dir = tmp_path / "data"
    done = subprocess.run([*CLI, "--data-dir", str(data_dir), *args], capture_output=True, text=True, timeout=120,
                          env=environ(**env), cwd=str(tmp_path), check=False)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert not (data_dir / "run").exists()  # refused before it started or owned anything
    return done


@pytest.mark.parametrize("password", ["", "   ", "sha256:" + hashlib.sha256(b"").hexdigest(), "sha256:abc"])
def test_a_blank_or_broken_ui_password_is_refused(tmp_path: Path, password: str) -> None:
    port = str(free_port())
    refused = start_refused(tmp_path, "serve", "--host", "0.0.0.0", "--port", port, WORKSPACE_UI__PASSWORD=password)
    assert refused.stderr.startswith("error: WORKSPACE_UI__PASSWORD ")
    assert "set a real password (or sha256:<hex> of one)" in refused.stderr and "Traceback" not in refused.stderr
    assert password.strip() == "" or password not in refused.stderr.replace("sha256:<hex>", "")


@pytest.mark.parametrize("keys", ["", " ", f"{KEY},", f"{KEY}, ,other", "sha256:" + hashlib.sha256(b"").hexdigest()])
def test_blank_api_keys_are_refused(tmp_path: Path, keys: str) -> None:
    refused = start_refused(tmp_path, "api", "--port", str(free_port()), WORKSPACE_API__KEYS=keys)
    assert refused.stderr.startswith("error: WORKSPACE_API__KEYS has a key that ")
    assert KEY not in refused.stderr


def test_serve_on_another_address_needs_a_password(tmp_path: Path) -> None:
    refused = start_refused(tmp_path, "serve", "--host", "0.0.0.0", "--port", str(free_port()))
    assert "The UI would listen on 0.0.0.0, where other machines can reach it, without a password." in refused.stderr


# Item 6: /health without a key, patient imports confined to the roots

def test_health_without_a_key_says_only_up_or_down(stack: Stack, guarded: httpx.Client) -> None:
    with httpx.Client(base_url=stack.guarded_url, timeout=60, trust_env=False) as anonymous:
        bare = anonymous.get("/health")
        assert bare.json() == {"status": "ok" if bare.status_code == 200 else "unavailable"}, bare.text
        assert_error(anonymous.get("/health", headers={"Authorization": "Bearer wrong"}), 401, "api_key")
    detailed = guarded.get("/health").json()
    assert set(detailed["checks"]) == {"catalog", "vectors", "queue", "worker"} and detailed["version"]


def test_imports_outside_the_roots_get_one_message(portal_api: httpx.Client, roots: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text(EVENTS.format(id="out1"), encoding="utf-8")
    (roots / "notes.txt").write_text("not events", encoding="utf-8")
    (roots / "folder").mkdir(exist_ok=True)
    (roots / "linked.csv").unlink(missing_ok=True)
    (roots / "linked.csv").symlink_to(outside)
    refused = [str(outside), str(tmp_path), str(tmp_path / "missing.csv"), "/etc/passwd", "/etc", "notes.txt",
               "folder", "missing.csv", f"../{tmp_path.name}/outside.csv", str(roots / ".." / outside.name),
               "linked.csv", str(roots / "linked.csv")]
    messages = set()
    for path in refused:
        response = portal_api.post("/patients/imports", json={"path": path})
        messages.add(assert_error(response, 422, "import_source"))
    assert len(messages) == 1, messages
    (message,) = messages
    assert "WORKSPACE_PATIENTS__IMPORT_ROOTS" in message and str(tmp_path) not in message and "passwd" not in message
    assert "P-roots" not in {p["patient_id"] for p in portal_api.get("/patients").json()}


def test_an_import_inside_the_roots_is_run(portal_api: httpx.Client, roots: Path) -> None:
    (roots / "day").mkdir(exist_ok=True)
    (roots / "day" / "sodium.csv").write_text(EVENTS.format(id="in1"), encoding="utf-8")
    queued = portal_api.post("/patients/imports", json={"path": "day/sodium.csv"})  # relative to the root
    assert queued.status_code == 202, queued.text
    assert queued.json()["path"] == str((roots / "day" / "sodium.csv").resolve())
    deadline = time.monotonic() + 120
    while (status := portal_api.get(f"/patients/imports/{queued.json()['id']}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert (status["status"], status["events"]) == ("done", 1), status
    assert [e["event_id"] for e in portal_api.get("/patients/P-roots/events").json()] == ["in1"]

