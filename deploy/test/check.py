"""The deployment's checks (run by deploy/check, which installs the tools first).

1. Every overlay, the batch, and the production overlay with each component, rendered with
   `kubectl kustomize` and every object validated, strictly, against the Kubernetes
   schemas of two versions.
2. The rules the manifests promise, read from the rendered objects: security contexts,
   probes, sizes against the tables the workers map, grace periods, disruption budget,
   spreading, and the NetworkPolicies evaluated for who may reach what.
3. The image: its build context staged, built with buildah when installed, and
   `cubeswarm --version` run from its unpacked layer.
4. The manifests run: the `local` overlay's coordinator and two workers, and the batch
   Job, started with exactly the commands, arguments, environment, ports, volumes and
   users the manifests give them (pods.py), every declared probe checked against what
   the process is doing, a coordinator outage, a killed Job pod and a drained worker,
   and the batch's output compared with the embedded solver's.

Ends with "deploy: N passed, N failed"; exit status 1 when a check failed.
"""

import argparse
import gzip
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import traceback
import urllib.request

import kubernetes_validate
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pods import Cluster, container_port, labels_match, parse_quantity  # noqa: E402

DEPLOY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(DEPLOY)
SCHEMA_VERSIONS = ["1.33.0", "1.37.0"]
MIB = 1024 * 1024


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, []

    def run(self, name, fn, *args):
        t = time.monotonic()
        try:
            note = fn(*args)
        except Exception as e:  # every failure is reported, the rest still runs
            self.failed.append(name)
            detail = str(e) if isinstance(e, AssertionError) else traceback.format_exc()
            print(f"FAIL {name}: {detail}", flush=True)
            return None
        self.passed += 1
        print(f"ok   {name} ({time.monotonic() - t:.1f} s){': ' + note if isinstance(note, str) else ''}",
              flush=True)
        return note if note is not None else True


# ---- 1. render and validate ------------------------------------------------------------

def render(kubectl, path):
    out = subprocess.run([kubectl, "kustomize", path], capture_output=True, text=True)
    assert out.returncode == 0, f"kubectl kustomize {path}:\n{out.stderr}"
    return [o for o in yaml.safe_load_all(out.stdout) if o]


def targets(work):
    """(label, directory) of everything rendered: overlays, batch, production + component."""
    out = [(f"overlays/{d}", os.path.join(DEPLOY, "overlays", d))
           for d in sorted(os.listdir(os.path.join(DEPLOY, "overlays")))]
    out.append(("batch", os.path.join(DEPLOY, "batch")))
    comps = os.path.join(DEPLOY, "components")
    for c in sorted(os.listdir(comps)):
        d = os.path.join(work, "render", f"production+{c}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "kustomization.yaml"), "w") as f:
            yaml.safe_dump({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                            "resources": [os.path.relpath(os.path.join(DEPLOY, "overlays", "production"), d)],
                            "components": [os.path.relpath(os.path.join(comps, c), d)]}, f)
        out.append((f"overlays/production + components/{c}", d))
    return out


def validate(objects):
    notes = []
    for o in objects:
        what = f"{o.get('kind')} {o.get('metadata', {}).get('name')}"
        if o.get("apiVersion", "").startswith("keda.sh/"):
            check_scaled_object(o, objects)
            notes.append(f"{what}: no schema offline, checked by its rules")
            continue
        if o.get("apiVersion", "").startswith("monitoring.coreos.com/"):
            check_monitoring_object(o, objects)
            notes.append(f"{what}: no schema offline, checked by its rules")
            continue
        for v in SCHEMA_VERSIONS:
            try:
                kubernetes_validate.validate(o, v, strict=True)
            except kubernetes_validate.ValidationError as e:
                raise AssertionError(f"{what} against Kubernetes {v}: {e.message} at {list(e.path)}")
    return "; ".join(notes) or f"{len(objects)} objects, Kubernetes {' and '.join(SCHEMA_VERSIONS)}, strict"


def validation_is_strict():
    """The validator refuses an unknown field and a wrong type (else the checks above
    would prove nothing)."""
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}}
    kubernetes_validate.validate(good, SCHEMA_VERSIONS[0], strict=True)
    for bad in ({**good, "dta": {}}, {**good, "metadata": {"name": "x", "labels": {"a": 1}}}):
        try:
            kubernetes_validate.validate(bad, SCHEMA_VERSIONS[0], strict=True)
        except kubernetes_validate.ValidationError:
            continue
        raise AssertionError(f"the validator accepted {bad}")


def check_scaled_object(o, objects):
    spec = o["spec"]
    ref = spec["scaleTargetRef"]
    dep = [x for x in objects if x["kind"] == ref.get("kind", "Deployment") and x["metadata"]["name"] == ref["name"]]
    assert dep, f"ScaledObject {o['metadata']['name']} scales {ref['name']}, which is not rendered"
    assert 1 <= spec.get("minReplicaCount", 0) <= spec["maxReplicaCount"], "replica bounds"
    for t in spec["triggers"]:
        assert t["type"] == "prometheus", f"trigger {t['type']}"
        for k in ("serverAddress", "query", "threshold"):
            assert k in t["metadata"], f"trigger without {k}"


def scaled_object_metrics():
    """The metric names the autoscaling component's queries read."""
    names = set()
    for f in os.listdir(os.path.join(DEPLOY, "components", "autoscaling")):
        for o in yaml.safe_load_all(open(os.path.join(DEPLOY, "components", "autoscaling", f))):
            if o and o.get("kind") == "ScaledObject":
                for t in o["spec"]["triggers"]:
                    names |= set(re.findall(r"\b(cubeswarm_[a-z_]+)", t["metadata"]["query"]))
    return names


MONITORING = os.path.join(DEPLOY, "components", "monitoring")


def check_monitoring_object(o, objects):
    """The Prometheus operator's objects of the monitoring component."""
    spec = o["spec"]
    if o["kind"] == "PrometheusRule":
        plain = yaml.safe_load(open(os.path.join(MONITORING, "prometheus-rules.yaml")))
        assert spec == plain, "prometheusrule.yaml's groups differ from prometheus-rules.yaml's"
        for g in spec["groups"]:
            for r in g["rules"]:
                assert r.get("alert") and r.get("expr"), f"rule without alert or expr: {r}"
                assert r.get("labels", {}).get("severity") in ("critical", "warning"), f"{r['alert']}: severity"
                assert r.get("annotations", {}).get("summary"), f"{r['alert']}: no summary"
    elif o["kind"] == "ServiceMonitor":
        want = spec["selector"]["matchLabels"]
        ports = {e["port"] for e in spec["endpoints"]}
        svcs = [x for x in objects if x["kind"] == "Service"
                and all(x["metadata"].get("labels", {}).get(k) == v for k, v in want.items())
                and ports & {p.get("name") for p in x["spec"]["ports"]}]
        assert svcs, f"ServiceMonitor {o['metadata']['name']} selects no Service with port {ports}"
    else:
        raise AssertionError(f"unexpected {o['kind']}")


def monitoring_metrics():
    """The metric names the dashboard and the alert rules read."""
    names = set()
    for f in ("grafana-dashboard.json", "prometheus-rules.yaml"):
        names |= set(re.findall(r"\b(cubeswarm_[a-z_]+)", open(os.path.join(MONITORING, f)).read()))
    return names


def check_dashboard():
    d = json.load(open(os.path.join(MONITORING, "grafana-dashboard.json")))
    assert d["uid"] and d["title"] and d["panels"], "dashboard without uid, title or panels"
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    for p in d["panels"]:
        assert p["targets"] and all(t.get("expr") for t in p["targets"]), f"panel {p['title']}: no query"
    return f"{len(d['panels'])} panels, {len(monitoring_metrics())} metric names"


def check_rules_promtool():
    promtool = shutil.which("promtool")
    if not promtool:
        return "SKIPPED: promtool is not installed (Debian's prometheus package has it)"
    out = subprocess.run([promtool, "check", "rules", os.path.join(MONITORING, "prometheus-rules.yaml")],
                         capture_output=True, text=True)
    assert out.returncode == 0, f"promtool check rules:\n{out.stdout}{out.stderr}"
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "ok"


# ---- 2. rules ----------------------------------------------------------------------------

def pod_templates(objects):
    for o in objects:
        if o["kind"] in ("Deployment", "StatefulSet", "Job"):
            yield o, o["spec"]["template"]


def component(o):
    return o["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component")


def flag(args, name):
    """The value of --name=V or --name V in an argument list (the last one)."""
    val = None
    for i, a in enumerate(args):
        if a == f"--{name}" and i + 1 < len(args):
            val = args[i + 1]
        elif a.startswith(f"--{name}="):
            val = a.split("=", 1)[1]
    return val


def flags(args, name):
    return [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")] + \
        [args[i + 1] for i, a in enumerate(args[:-1]) if a == f"--{name}"]


def check_security(objects):
    for o, t in pod_templates(objects):
        spec = t["spec"]
        pod_sc = spec.get("securityContext", {})
        assert spec.get("automountServiceAccountToken") is False, f"{o['metadata']['name']}: API token mounted"
        host_paths = {v["name"] for v in spec.get("volumes", []) if "hostPath" in v}
        for kind in ("initContainers", "containers"):
            for c in spec.get(kind, []):
                sc = {**pod_sc, **c.get("securityContext", {})}
                who = f"{o['metadata']['name']}/{c['name']}"
                assert sc.get("readOnlyRootFilesystem") is True, f"{who}: writable root filesystem"
                assert sc.get("allowPrivilegeEscalation") is False, f"{who}: privilege escalation allowed"
                assert c.get("securityContext", {}).get("capabilities", {}).get("drop") == ["ALL"], f"{who}: capabilities kept"
                assert not sc.get("capabilities", {}).get("add"), f"{who}: capabilities added"
                assert not sc.get("privileged"), f"{who}: privileged"
                root = sc.get("runAsUser", 65532) == 0 or not sc.get("runAsNonRoot", False)
                writes_host = any(m["name"] in host_paths and not m.get("readOnly") for m in c.get("volumeMounts", []))
                # Only an init container that fills a hostPath cache may be root (see worker.yaml).
                assert not root or (kind == "initContainers" and writes_host), f"{who}: runs as root"
                for m in c.get("volumeMounts", []):
                    if m["name"] in host_paths and kind == "containers":
                        assert m.get("readOnly"), f"{who}: writes to a hostPath"
    return "non-root, read-only root, no capabilities (cache-filling init containers: uid 0, no capabilities)"


def table_sizes(binary):
    """Bytes of every table file, from `cubeswarm tables list` (estimates for missing files)."""
    out = subprocess.run([binary, "tables", "list", "--tables-dir", "/nonexistent"], capture_output=True,
                         text=True, check=True).stdout
    sizes = {}
    for line in out.splitlines():
        m = re.match(r"(\S+)\s+\S+\s+([0-9.]+) (kB|MB|GB)", line)
        if m:
            sizes[m.group(1)] = float(m.group(2)) * {"kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(3)]
    return sizes


def table_files(name):
    """The files a worker maps for a table (the catalog's, with the fallback eoesep that
    `tables fetch` brings along for the 2-bit tables h48hNk2)."""
    if name == "twophase":
        return ["twophase-fsym", "twophase-p1", "twophase-p2"]
    fallback = ["eoesep"] if re.fullmatch(r"h48h([0-9]|1[01])k2", name) else []
    return [name, "cocsep"] + fallback


def check_coordinator(objects):
    deps = [o for o, _ in pod_templates(objects) if component(o) == "coordinator"]
    assert len(deps) == 1, "one coordinator workload"
    d = deps[0]
    if d["kind"] == "Deployment":
        assert d["spec"]["replicas"] == 1 and d["spec"]["strategy"]["type"] == "Recreate", "coordinator: 1 replica, Recreate"
    spec = d["spec"]["template"]["spec"]
    c = spec["containers"][0]
    assert "grpc" in c["readinessProbe"], "coordinator readiness: the gRPC health service"
    live = c["livenessProbe"]
    assert "httpGet" in live and live["httpGet"].get("host") is None, "coordinator liveness: its own HTTP endpoint"
    listen = flag(c["args"], "listen")
    port = int(listen.rsplit(":", 1)[1])
    assert c["readinessProbe"]["grpc"]["port"] == port, "readiness probes the gRPC port"
    assert container_port(spec, live["httpGet"]["port"]) == int(flag(c["args"], "metrics-listen").rsplit(":", 1)[1])
    grace = float(flag(c["args"], "shutdown-grace") or 5)
    assert spec["terminationGracePeriodSeconds"] >= grace + 5, "coordinator: grace period below --shutdown-grace + 5 s"
    services = [s for s in objects if s["kind"] == "Service" and labels_match({"matchLabels": s["spec"]["selector"]},
                                                                            d["spec"]["template"]["metadata"]["labels"])]
    ports = {container_port(spec, p.get("targetPort", p["port"])) for s in services for p in s["spec"]["ports"]}
    assert {port, int(flag(c["args"], "metrics-listen").rsplit(":", 1)[1])} <= ports, "Services for gRPC and metrics"


def check_workers(objects, sizes):
    deps = [o for o, _ in pod_templates(objects) if component(o) == "worker"]
    assert len(deps) == 1, "one worker Deployment"
    d = deps[0]
    spec = d["spec"]["template"]["spec"]
    w = next(c for c in spec["containers"] if c["name"] == "worker")
    tables = flags(w["args"], "table")
    assert tables, "the worker names its tables"
    need = sum(sizes[f] for t in tables for f in set(table_files(t)))
    res = w["resources"]
    for k in ("requests", "limits"):
        for r in ("cpu", "memory"):
            assert r in res.get(k, {}), f"worker: no {k}.{r}"
    limit = parse_quantity(res["limits"]["memory"])
    request = parse_quantity(res["requests"]["memory"])
    # The mapped tables are charged to the pod's memory cgroup; 64 MiB for the process.
    assert request >= need + 64 * MIB and limit >= request, \
        f"worker memory {res} below its tables ({need / 1e6:.0f} MB) + 64 MiB"
    grace = float(flag(w["args"], "grace-period") or 25)
    assert spec["terminationGracePeriodSeconds"] >= grace + 10, "worker: terminationGracePeriodSeconds < --grace-period + 10"
    sp = w["startupProbe"]
    budget = sp.get("initialDelaySeconds", 0) + sp["periodSeconds"] * sp["failureThreshold"]
    # Checking reads every byte: allow a cold disk at 20 MB/s, and at least a minute.
    assert budget >= max(60, need / 20e6), f"startup probe budget {budget} s too short for {need / 1e6:.0f} MB"
    assert w["readinessProbe"]["httpGet"]["path"] == "/readyz", "worker readiness must be /readyz (tables checked)"
    assert w["startupProbe"]["httpGet"]["path"] == "/readyz", "worker startup must wait for /readyz"
    assert w["livenessProbe"]["httpGet"]["path"] == "/healthz", "worker liveness must be /healthz"
    fetched = {c["args"][2] for c in spec.get("initContainers", []) if c["args"][:2] == ["tables", "fetch"]}
    # Every table comes from the cache-filling init containers (or, with no init
    # containers, from a shared volume).
    assert set(tables) == fetched or not spec.get("initContainers"), f"tables {tables} vs fetched {fetched}"
    pdbs = [p for p in objects if p["kind"] == "PodDisruptionBudget"
            and labels_match(p["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"])]
    assert pdbs, "no PodDisruptionBudget for the workers"
    spread = spec.get("topologySpreadConstraints") or spec.get("affinity", {}).get("podAntiAffinity")
    assert spread, "workers neither spread nor anti-affine across nodes"
    return f"{tables}: {need / 1e6:.0f} MB of tables, memory {res['requests']['memory']}/{res['limits']['memory']}"


def allowed(objects, src_labels, src_ns, dst_labels, port):
    """NetworkPolicy semantics (ingress): may a pod (labels, namespace) open `port` on a pod
    of the cubeswarm namespace?"""
    ns = next(o["metadata"]["name"] for o in objects if o["kind"] == "Namespace")
    pols = [p for p in objects if p["kind"] == "NetworkPolicy" and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])
            and labels_match(p["spec"]["podSelector"], dst_labels)]
    if not pols:
        return True
    for p in pols:
        for rule in p["spec"].get("ingress", []):
            if rule.get("ports") and not any(x.get("port") == port for x in rule["ports"]):
                continue
            peers = rule.get("from")
            if peers is None:
                return True
            for peer in peers:
                ns_ok = (src_ns == ns) if "namespaceSelector" not in peer else \
                    labels_match(peer["namespaceSelector"], {"kubernetes.io/metadata.name": src_ns})
                pod_ok = "podSelector" not in peer or labels_match(peer["podSelector"], src_labels)
                if ns_ok and pod_ok:
                    return True
    return False


def check_batch(objects):
    """The Job is safe to restart: --resume into a file on a PersistentVolumeClaim, and
    a restart policy that brings it back."""
    jobs = [o for o, _ in pod_templates(objects) if component(o) == "batch"]
    assert len(jobs) == 1, "one batch Job"
    spec = jobs[0]["spec"]["template"]["spec"]
    c = spec["containers"][0]
    assert c["args"][0] == "solve" and "--resume" in c["args"], "the Job runs solve --resume"
    out = flag(c["args"], "output")
    mount = max((m for m in c["volumeMounts"] if out.startswith(m["mountPath"].rstrip("/") + "/")),
                key=lambda m: len(m["mountPath"]))
    vol = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    assert "persistentVolumeClaim" in vol and not mount.get("readOnly"), "--output is not on a writable claim"
    assert spec["restartPolicy"] in ("OnFailure", "Never") and jobs[0]["spec"].get("backoffLimit", 6) >= 1
    assert jobs[0]["spec"].get("parallelism", 1) == 1, "two pods would write one journal"


def check_network_policy(objects):
    labels = {component(o): o["spec"]["template"]["metadata"]["labels"] for o, _ in pod_templates(objects)}
    coord = labels["coordinator"]
    c = next(o for o, _ in pod_templates(objects) if component(o) == "coordinator")["spec"]["template"]["spec"]["containers"][0]
    grpc = int(flag(c["args"], "listen").rsplit(":", 1)[1])
    metrics = int(flag(c["args"], "metrics-listen").rsplit(":", 1)[1])
    client = {"cubeswarm.io/client": "true"}
    cases = [("worker -> coordinator gRPC", labels["worker"], "cubeswarm", coord, grpc, True),
             ("client pod -> coordinator gRPC", client, "cubeswarm", coord, grpc, True),
             ("unlabelled pod -> coordinator gRPC", {}, "cubeswarm", coord, grpc, False),
             ("other namespace -> coordinator gRPC", labels["worker"], "default", coord, grpc, False),
             ("worker -> coordinator metrics", labels["worker"], "cubeswarm", coord, metrics, False),
             ("monitoring -> coordinator metrics", {}, "monitoring", coord, metrics, True),
             ("coordinator -> worker", coord, "cubeswarm", labels["worker"], 8080, False)]
    if "batch" in labels:
        cases.append(("batch Job -> coordinator gRPC", labels["batch"], "cubeswarm", coord, grpc, True))
    for what, src, ns, dst, port, want in cases:
        assert allowed(objects, src, ns, dst, port) == want, f"NetworkPolicy: {what} should be {'open' if want else 'closed'}"


# ---- 3. image ----------------------------------------------------------------------------

def containerfile():
    text = open(os.path.join(DEPLOY, "Containerfile")).read()
    entry = json.loads(re.search(r"^ENTRYPOINT\s+(\[.*\])", text, re.M).group(1))
    uid, gid = re.search(r"^USER\s+(\d+):(\d+)", text, re.M).groups()
    return entry, (int(uid), int(gid))


def build_image(binary, work):
    """Stages the context, builds with buildah when present, unpacks the image's layers.
    Returns (rootfs for the pods, note)."""
    ctx = os.path.join(work, "image")
    subprocess.run([os.path.join(DEPLOY, "image"), "--binary", binary, "--stage-only", ctx], check=True,
                   stdout=subprocess.DEVNULL)
    staged = os.path.join(ctx, "rootfs")
    if shutil.which("buildah") is None:
        return "buildah not installed: image not built; the pods run the staged rootfs"
    if os.geteuid() != 0:
        return "not root (rootless buildah needs subordinate ids): image not built"
    store = os.path.join(work, "buildah")
    opts = ["--root", os.path.join(store, "root"), "--runroot", os.path.join(store, "run"), "--storage-driver", "vfs"]
    tag = "localhost/cubeswarm:check"
    env = {**os.environ, "BUILDAH_ARGS": " ".join(opts), "CARGO_TARGET_DIR": work + "/cargo-unused"}
    out = subprocess.run(["buildah", *opts, "build", "--isolation", "chroot", "--layers=false", "-f",
                          os.path.join(ctx, "Containerfile"), "-t", tag, ctx], capture_output=True, text=True, env=env)
    assert out.returncode == 0, f"buildah build:\n{out.stderr[-3000:]}"
    oci = os.path.join(work, "oci")
    shutil.rmtree(oci, ignore_errors=True)
    subprocess.run(["buildah", *opts, "push", tag, f"oci:{oci}"], check=True, capture_output=True)
    index = json.load(open(os.path.join(oci, "index.json")))
    blob = lambda d: os.path.join(oci, "blobs", *d["digest"].split(":"))  # noqa: E731
    manifest = json.load(open(blob(index["manifests"][0])))
    config = json.load(open(blob(manifest["config"])))["config"]
    entry, user = containerfile()
    assert config.get("Entrypoint") == entry, f"image entrypoint {config.get('Entrypoint')}"
    assert config.get("User") == f"{user[0]}:{user[1]}", f"image user {config.get('User')}"
    rootfs = os.path.join(work, "image-rootfs")
    shutil.rmtree(rootfs, ignore_errors=True)
    os.makedirs(rootfs)
    for layer in manifest["layers"]:
        with open(blob(layer), "rb") as f:
            magic = f.read(2)
        opener = gzip.open if magic == b"\x1f\x8b" else open
        with opener(blob(layer), "rb") as f, tarfile.open(fileobj=f, mode="r|") as tar:
            tar.extractall(rootfs, filter="tar") if hasattr(tarfile, "data_filter") else tar.extractall(rootfs)
    files = sum(len(f) for _, _, f in os.walk(rootfs))
    size = sum(os.path.getsize(os.path.join(b, x)) for b, _, fs in os.walk(rootfs) for x in fs)
    return f"built with buildah {buildah_version()}; {len(manifest['layers'])} layer, {files} files, {size / 1e6:.0f} MB"


def buildah_version():
    return subprocess.run(["buildah", "--version"], capture_output=True, text=True).stdout.split()[2]


def image_runs(rootfs, binary):
    entry, (uid, gid) = containerfile()
    if os.geteuid() != 0:
        assert os.path.exists(os.path.join(rootfs, entry[0].lstrip("/"))), "no binary in the image"
        return "not root: the binary is in the image, not run from it"
    out = subprocess.run(["chroot", f"--userspec={uid}:{gid}", rootfs, *entry, "--version"],
                         capture_output=True, text=True)
    want = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    assert out.returncode == 0 and out.stdout == want, f"--version from the image: {out.stdout!r} {out.stderr!r}"
    return out.stdout.strip() + f" (as {uid}:{gid}, with only the image's files)"


# ---- 4. the manifests, run ---------------------------------------------------------------

def wait_until(what, cond, timeout, step=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"timed out ({timeout:.0f} s) waiting for {what}")


def startup_budget(ctr):
    p = ctr.get("startupProbe")
    if not p:
        return 60
    return p.get("initialDelaySeconds", 0) + p.get("periodSeconds", 10) * p.get("failureThreshold", 3)


def metric(text, name):
    m = re.search(rf"^{name} ([0-9.e+-]+)$", text, re.M)
    assert m, f"no {name} in /metrics"
    return float(m.group(1))


def e2e(ctx, binary, tables, work, rootfs):
    checks = ctx["checks"]
    objects = ctx["local"] + ctx["batch"]
    entry, user = containerfile()
    token = secrets.token_hex(16)
    # The one object the operator makes by hand (deploy/README.md's fourth command).
    operator = {"cubeswarm-token": {"token": token}}
    cluster = Cluster(objects, binary, rootfs, entry, user, work, operator)
    ctx["cluster"] = cluster
    print(f"     pods run in {cluster.mode()}", flush=True)
    dep = {component(o): o for o, _ in pod_templates(objects)}
    coord_dep, worker_dep, job = dep["coordinator"], dep["worker"], dep["batch"]

    # The coordinator's volume as a previous start left it: the files of the first table
    # its init containers build, one of them damaged (a byte of its body). Its init
    # containers must then verify the intact ones, rebuild the damaged one and build the
    # other tables (the local overlay: twophase verified, h48h0k4 built in 13 s).
    cpod = coord_dep["spec"]["template"]["spec"]
    claim = next(v["persistentVolumeClaim"]["claimName"] for v in cpod["volumes"] if "persistentVolumeClaim" in v)
    built = [c["args"][2] for c in cpod["initContainers"] if c["args"][:2] == ["tables", "build"]]
    seeded = table_files(built[0])
    for f in seeded:
        shutil.copyfile(os.path.join(tables, f + ".tbl"), os.path.join(cluster.claim_dir(claim), f + ".tbl"))
    with open(os.path.join(cluster.claim_dir(claim), seeded[0] + ".tbl"), "r+b") as f:
        f.seek(4096 + 1000)
        b = f.read(1)
        f.seek(4096 + 1000)
        f.write(bytes([b[0] ^ 0x40]))
    want = {(seeded[0], "built")} | {(f, "present and verified") for f in seeded[1:]} | \
        {(f, "built") for t in built[1:] for f in table_files(t) if f not in seeded}

    coord = cluster.add_pod("cubeswarm-coordinator-0", coord_dep["spec"]["template"])
    cspec = coord.spec["containers"][0]

    def coordinator_ready():
        coord.run_init(time.monotonic() + 240)
        said = []
        for c in coord.spec["initContainers"]:
            log = coord.containers[c["name"]].log()
            said += re.findall(r"^(\S+): (present and verified|built)", log, re.M)
        assert want <= set(said), f"init containers said {said}, not {sorted(want)}"
        k = coord.start_containers()[0]
        ctx["coordinator"] = k
        wait_until("the coordinator's readiness (gRPC health SERVING)",
                   lambda: k.probe("readinessProbe")[0] or (not k.alive() and fail(k)), startup_budget(cspec))
        ok, detail = k.probe("livenessProbe")
        assert ok, f"coordinator liveness: {detail}"
        return f"init containers: {sorted(set(said))}; readiness {k.probe('readinessProbe')[1]}, liveness {detail}"

    if not checks.run("e2e: coordinator pod starts; gRPC readiness and HTTP liveness answer", coordinator_ready):
        return

    replicas = worker_dep["spec"]["replicas"]
    wspec = worker_dep["spec"]["template"]["spec"]
    workers = [cluster.add_pod(f"cubeswarm-worker-{i}", worker_dep["spec"]["template"]) for i in range(replicas)]

    def workers_ready():
        notes = []
        for w in workers:
            w.run_init(time.monotonic() + 90)
            k = w.start_containers()[0]
            samples = []  # (t, ready, detail, "worker ready" in the log at that moment)

            def ready():
                logged = "worker ready" in k.log()
                ok, detail = k.probe("readinessProbe")
                samples.append((time.monotonic(), ok, detail, logged))
                if not k.alive():
                    fail(k)
                return ok
            wait_until(f"{w.name} readiness", ready, startup_budget(k.spec), step=0.005)
            ok, detail = k.probe("startupProbe")
            assert ok, f"{w.name} startup probe after ready: {detail}"
            wait_until(f"{w.name} connected", lambda: "connected to coordinator" in k.log(), 30)
            early = [s for s in samples if s[1] and not s[3]]
            # A 200 before the log says ready can only be the log lagging the flag by a line.
            wait_until("the log to say ready", lambda: "worker ready" in k.log(), 2)
            not_ready = [s for s in samples if not s[1]]
            # The process itself must have said "not ready" (an HTTP answer, not a refused
            # connection) while it checked its tables.
            assert any(re.match(r"[45]\d\d ", s[2]) for s in not_ready), \
                f"{w.name}: readiness never answered 'not ready' while the tables were checked: {not_ready[-3:]}"
            notes.append(f"{w.name}: {len(not_ready)} not-ready answers "
                         f"({sorted({s[2].split(':')[0][:40] for s in not_ready})}) then ready"
                         + (f", {len(early)} ahead of the log line" if early else ""))
        queries = [q for q in cluster.dns.queries if q.startswith("cubeswarm-coordinator.")] if cluster.dns else []
        if cluster.root:
            assert queries, "no DNS query for the coordinator's Service name reached the cluster DNS"
            notes.append(f"DNS answered {len(queries)} lookups of {queries[0]} from the image's glibc")
        return "; ".join(notes)

    if not checks.run(f"e2e: {replicas} worker pods fetch their tables through the Service name and become ready",
                      workers_ready):
        return
    wks = [w.containers["worker"] for w in workers]
    ckpt = ctx["coordinator"]

    def scrape():
        mport = container_port(coord.spec, cspec["livenessProbe"]["httpGet"]["port"])
        return urllib.request.urlopen(f"http://{coord.ip}:{mport}/metrics", timeout=5).read().decode()

    def metrics_exposed():
        text = scrape()
        assert metric(text, "cubeswarm_workers_connected") == replicas, "workers connected"
        for name in scaled_object_metrics():
            metric(text, name)
        # The dashboard's and the alerts' (a family may have no sample yet: its TYPE line).
        families = set(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
        have = {n for n, _ in families} | {n + s for n, k in families if k == "histogram"
                                            for s in ("_bucket", "_sum", "_count")}
        missing = sorted(monitoring_metrics() - have)
        assert not missing, f"the dashboard or the alert rules use {missing}, not in /metrics"
        return (f"cubeswarm_workers_connected {replicas}; the autoscaler's {sorted(scaled_object_metrics())} "
                f"and the dashboard's and alerts' {len(monitoring_metrics())} metrics exported")

    checks.run("e2e: /metrics on the metrics Service's port counts the workers", metrics_exposed)

    def outage():
        grace = coord.spec["terminationGracePeriodSeconds"]
        before = [k.log().count("connected to coordinator") for k in wks]
        ckpt.signal(signal.SIGTERM)
        sent, samples = time.monotonic(), []
        while ckpt.alive() and time.monotonic() - sent < grace:
            ok, detail = ckpt.probe("readinessProbe")
            samples.append((time.monotonic() - sent, ok, detail))
        code = ckpt.wait(grace)
        assert code == 0, f"coordinator exit after SIGTERM: {code} (within {grace} s)"
        first = next((i for i, x in enumerate(samples) if not x[1]), len(samples))
        assert not any(x[1] for x in samples[first:]), f"coordinator ready again while stopping: {samples[first:]}"
        assert first == len(samples) or samples[first][0] < 1, "coordinator still ready 1 s after SIGTERM"
        stopping = sorted({x[2].split(":")[0] for x in samples[first:]})
        # Longer than a liveness failureThreshold x periodSeconds would need to fail... capped.
        spec = wks[0].spec["livenessProbe"]
        window = min(6, spec["periodSeconds"] * spec["failureThreshold"])
        end = time.monotonic() + window
        n = 0
        while time.monotonic() < end:
            for k in wks:
                ok, detail = k.probe("livenessProbe")
                assert ok and k.alive(), f"{k.pod.name} liveness failed during the outage: {detail}"
                ok, detail = k.probe("readinessProbe")
                assert ok, f"{k.pod.name} unready during the outage: {detail}"
                n += 1
            time.sleep(0.2)
        k = coord.start_containers()[0]
        ctx["coordinator"] = k
        wait_until("the coordinator ready again", lambda: k.probe("readinessProbe")[0], startup_budget(cspec))
        wait_until("every worker reconnected", lambda: all(
            w.log().count("connected to coordinator") > b for w, b in zip(wks, before)), 60)
        return (f"coordinator readiness while stopping: {stopping}; {n} liveness and readiness answers from "
                f"the workers over {window} s without a coordinator; reconnected")

    checks.run("e2e: a coordinator outage restarts no worker (liveness independent of it)", outage)

    jspec = job["spec"]["template"]
    scrambles = cluster.config_map(next(v["configMap"]["name"] for v in jspec["spec"]["volumes"] if "configMap" in v))
    jc = jspec["spec"]["containers"][0]
    out_path = next(v for v in jc["args"] if v.startswith("--output="))[len("--output="):]

    def batch():
        pod = cluster.add_pod("cubeswarm-batch-0", jspec)
        output = os.path.join(pod.volume_dir(next(
            v for v in jspec["spec"]["volumes"] if v["name"] == next(
                m["name"] for m in jc["volumeMounts"] if out_path.startswith(m["mountPath"])))),
            os.path.basename(out_path))
        k = pod.start_containers()[0]
        lines = lambda: open(output).read().count("\n") if os.path.exists(output) else 0  # noqa: E731
        wait_until("the first records", lambda: lines() >= 20 or not k.alive(), 120, step=0.02)
        first = killed_at = lines()
        k.signal(signal.SIGKILL)  # the node under the Job's pod dies
        k.wait(10)
        # What the coordinator still runs for the dead client ends first; then count.
        wait_until("the coordinator idle", lambda: (lambda t: metric(t, "cubeswarm_jobs_running") == 0
                                                    and metric(t, "cubeswarm_jobs_queued") == 0)(scrape()), 60)
        released = metric(scrape(), "cubeswarm_positions_total")
        assert job["spec"]["template"]["spec"]["restartPolicy"] in ("OnFailure", "Never")
        k = pod.start_containers()[0]  # the Job controller's next pod, same volume
        # Once it has written more, one worker is drained (kubectl delete pod, a node
        # drain): SIGTERM while it most likely runs a job.
        wait_until("more records", lambda: lines() > first + 130 or not k.alive(), 120, step=0.02)
        w = wks[-1]
        w.signal(signal.SIGTERM)
        sent = time.monotonic()
        after = []
        while w.alive():
            ok, detail = w.probe("readinessProbe")
            after.append((time.monotonic() - sent, ok, detail))
            time.sleep(0.01)
        code = w.wait(1)
        grace = workers[-1].spec["terminationGracePeriodSeconds"]
        assert code == 0, f"drained worker exit status {code}"
        # Probes answered before the signal was handled may still say ready; once it says
        # not ready (within a second), it never says ready again.
        first = next((i for i, x in enumerate(after) if not x[1]), len(after))
        assert not any(x[1] for x in after[first:]), f"drained worker ready again: {after[first:]}"
        assert first == len(after) or after[first][0] < 1, f"still ready {after[first][0]:.1f} s after SIGTERM"
        assert time.monotonic() - sent <= grace, f"drain took longer than {grace} s"
        code = k.wait(300)
        assert code == 0, f"batch Job exit status {code}:\n{k.log()[-2000:]}"
        # The second pod solved only what the first had not written (--resume; the last
        # record is solved again in case it was torn).
        again = metric(scrape(), "cubeswarm_positions_total") - released
        total = len(open(output).read().splitlines())
        assert again <= total - killed_at + 1, f"the restarted Job solved {again:.0f} positions, " \
            f"{killed_at} of {total} were already written"
        got = [json.loads(x) for x in open(output).read().splitlines()]
        # The same file solved by the embedded solver, with the Job's own flags.
        ref_out = os.path.join(work, "embedded.jsonl")
        ref_in = os.path.join(work, "scrambles.txt")
        open(ref_in, "w").write(next(iter(scrambles.values())))
        args = [a for a in jc["args"] if not re.match(r"--(coordinator|token-file|input|output|resume|wait-for-workers|connect-timeout)\b", a)]
        subprocess.run([binary, *args, "--input", ref_in, "--output", ref_out, "--tables-dir", tables],
                       check=True, env={**os.environ, "CUBESWARM_COORDINATOR": ""})
        want = [json.loads(x) for x in open(ref_out).read().splitlines()]
        strip = lambda r: {k: v for k, v in r.items() if k not in ("millis",)}  # noqa: E731
        assert [r["id"] for r in got] == [r["id"] for r in want], "records missing, repeated or out of order"
        diff = [(a, b) for a, b in zip(got, want) if strip(a) != strip(b)]
        assert not diff, f"{len(diff)} records differ from the embedded solver's, e.g. {diff[0]}"
        draining = [x for x in after if "draining" in x[2]]
        drained = (f"/readyz said draining for {draining[-1][0] - draining[0][0]:.2f} s while jobs finished"
                   if draining else "exited at once")
        return (f"{len(got)} records equal to the embedded solver's; Job pod killed after {killed_at} and resumed; "
                f"the second solved {again:.0f}; {w.pod.name} SIGTERMed meanwhile: {drained}, never ready again, exit 0")

    checks.run("e2e: the batch Job solves its ConfigMap through the coordinator, survives a kill (--resume)", batch)

    def shutdown():
        notes = []
        for k in [x for x in wks if x.alive()] + [ctx["coordinator"]]:
            grace = k.pod.spec["terminationGracePeriodSeconds"]
            k.signal(signal.SIGTERM)
            code = k.wait(grace)
            assert code == 0, f"{k.pod.name}: exit {code} within {grace} s of SIGTERM"
        for pod in cluster.pods:
            m = cluster.peak_memory(pod)
            if m:
                notes.append(f"{pod.name} {m[0] / MIB:.0f} MiB of {m[1] / MIB:.0f} MiB")
        return "exit 0 within the grace periods" + ("; peak memory of the pods' cgroups, page cache included: "
                                                    + ", ".join(notes) if notes else "")

    checks.run("e2e: SIGTERM ends every pod with status 0 within terminationGracePeriodSeconds", shutdown)


def fail(k):
    raise AssertionError(f"{k.pod.name}/{k.name} exited with {k.proc.returncode}:\n{k.log()[-3000:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubectl", required=True)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--tables", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    a.kubectl, a.binary, a.tables, a.work = map(os.path.abspath, (a.kubectl, a.binary, a.tables, a.work))
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    checks = Checks()
    ctx = {"checks": checks}
    checks.run("the validator is strict (refuses unknown fields and wrong types)", validation_is_strict)
    checks.run("monitoring: the Grafana dashboard", check_dashboard)
    checks.run("monitoring: promtool check rules", check_rules_promtool)
    sizes = table_sizes(a.binary)
    for label, path in targets(a.work):
        objs = checks.run(f"render {label}", render, a.kubectl, path)
        if not objs:
            continue
        if label == "overlays/local":
            ctx["local"] = objs
        if label == "batch":
            ctx["batch"] = objs
        checks.run(f"validate {label}", validate, objs)
        if label != "batch":
            checks.run(f"rules {label}: security", check_security, objs)
            checks.run(f"rules {label}: coordinator", check_coordinator, objs)
            checks.run(f"rules {label}: workers sized for their tables", check_workers, objs, sizes)
            checks.run(f"rules {label}: NetworkPolicy", check_network_policy, objs)
        else:
            checks.run("rules batch: security", check_security, objs)
            checks.run("rules batch: restartable (--resume into a claim)", check_batch, objs)
    if "local" in ctx and "batch" in ctx:
        checks.run("rules local + batch: NetworkPolicy lets the Job in", check_network_policy, ctx["local"] + ctx["batch"])
    rootfs = checks.run("image: build context staged, image built", build_image, a.binary, a.work)
    if rootfs:
        rootfs_dir = os.path.join(a.work, "image-rootfs")
        rootfs_dir = rootfs_dir if os.path.isdir(rootfs_dir) else os.path.join(a.work, "image", "rootfs")
        checks.run("image: cubeswarm --version runs from it", image_runs, rootfs_dir, a.binary)
        if "local" in ctx and "batch" in ctx:
            try:
                e2e(ctx, a.binary, a.tables, a.work, rootfs_dir)
            finally:
                if "cluster" in ctx:
                    ctx["cluster"].cleanup()
    print(f"deploy: {checks.passed} passed, {len(checks.failed)} failed")
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
