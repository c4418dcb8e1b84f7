"""Runs pods from rendered manifests the way a kubelet would, without Kubernetes.

Each pod gets a "node" of its own: as root, a network namespace on a bridge (its pod IP),
a mount namespace whose root is a copy of the image's rootfs (read-only when the manifest
says so) with the pod's volumes at their mountPaths, the kubelet's /etc/hosts and
/etc/resolv.conf (ClusterFirst: the namespace's search list, ndots:5, a DNS server that
answers for the Services), the pod's hostname, a memory cgroup at the container's limit,
and the container's user, groups and capabilities. Commands, arguments and environment
come from the manifest, with valueFrom references and $(VAR) expanded like the kubelet.

Without root the same runs on loopback: each pod has an address of 127.0.0.0/8, the host
binary runs directly, and the three things a pod would see differently are substituted
in its arguments and environment: a mountPath becomes the volume's directory, a Service
name becomes the address of the pod behind it, and 0.0.0.0 becomes the pod's address.
"""

import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SUBNET = "10.78.0"


def parse_quantity(q):
    """A Kubernetes quantity ("1", "500m", "384Mi", "2G") as a float."""
    q = str(q)
    units = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024, "Mi": 1024**2,
             "Gi": 1024**3, "Ti": 1024**4}
    m = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", q)
    if not m or (m.group(2) and m.group(2) not in units):
        raise ValueError(f"bad quantity {q!r}")
    return float(m.group(1)) * units.get(m.group(2), 1)


def labels_match(selector, labels):
    """A LabelSelector (matchLabels and matchExpressions) against a label map."""
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        k, op, vals = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and labels.get(k) in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


class Dns(threading.Thread):
    """A DNS server for A queries of the cluster's Service names (NXDOMAIN otherwise)."""

    def __init__(self, addr, records):
        super().__init__(daemon=True)
        self.records = records  # name (no trailing dot) -> IPv4 address
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((addr, 53))
        self.queries = []

    def run(self):
        while True:
            try:
                msg, peer = self.sock.recvfrom(512)
            except OSError:
                return
            try:
                self.sock.sendto(self.answer(msg), peer)
            except (OSError, IndexError, struct.error):
                pass

    def answer(self, msg):
        qid, _flags, qd = struct.unpack(">HHH", msg[:6])
        i, labels = 12, []
        while msg[i]:
            labels.append(msg[i + 1:i + 1 + msg[i]].decode("ascii", "replace"))
            i += 1 + msg[i]
        qtype, _qclass = struct.unpack(">HH", msg[i + 1:i + 5])
        question = msg[12:i + 5]
        name = ".".join(labels).lower()
        self.queries.append(name)
        ip = self.records.get(name)
        if ip is None:
            return struct.pack(">HHHHHH", qid, 0x8183, qd, 0, 0, 0) + question  # NXDOMAIN
        if qtype != 1:
            return struct.pack(">HHHHHH", qid, 0x8180, qd, 0, 0, 0) + question  # no AAAA
        rr = struct.pack(">HHHIH", 0xC00C, 1, 1, 5, 4) + socket.inet_aton(ip)
        return struct.pack(">HHHHHH", qid, 0x8180, qd, 1, 0, 0) + question + rr


class Container:
    """One running (or finished) container process."""

    def __init__(self, pod, spec, proc, log):
        self.pod, self.spec, self.proc, self.log_path = pod, spec, proc, log
        self.name = spec["name"]
        self.started = time.monotonic()

    def log(self):
        try:
            return open(self.log_path, errors="replace").read()
        except OSError:
            return ""

    def alive(self):
        return self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            os.kill(self.proc.pid, sig)

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def probe(self, kind):
        """One evaluation of the container's probe `kind` (readinessProbe...): (ok, detail)."""
        p = self.spec.get(kind)
        if p is None:
            return None
        return self.pod.cluster.run_probe(self.pod, self.spec, p)


class Pod:
    def __init__(self, cluster, name, template, index):
        self.cluster, self.name, self.template = cluster, name, template
        self.spec = template["spec"]
        self.labels = template["metadata"].get("labels", {})
        self.ip = cluster.pod_ip(index)
        self.netns = f"{cluster.tag}-{index}"
        self.dir = os.path.join(cluster.work, "pods", name)
        self.node_dir = os.path.join(cluster.work, "nodes", name)
        self.containers = {}
        self.volumes = {}
        os.makedirs(self.dir, exist_ok=True)

    # ---- volumes ---------------------------------------------------------------------
    def volume_dir(self, vol):
        """The host directory behind a pod volume (made, filled and owned like the kubelet)."""
        c = self.cluster
        fs_group = self.spec.get("securityContext", {}).get("fsGroup")
        name = vol["name"]
        if name in self.volumes:
            return self.volumes[name]
        if "hostPath" in vol:
            d = os.path.join(self.node_dir, vol["hostPath"]["path"].lstrip("/"))
            t = vol["hostPath"].get("type", "")
            if not os.path.isdir(d):
                if t != "DirectoryOrCreate":
                    raise RuntimeError(f"pod {self.name}: hostPath {d} missing (type {t!r})")
                os.makedirs(d, mode=0o755)
            fs_group = None  # the kubelet leaves hostPath ownership alone
        elif "persistentVolumeClaim" in vol:
            claim = vol["persistentVolumeClaim"]["claimName"]
            c.find("PersistentVolumeClaim", claim)
            d = c.claim_dir(claim)
        elif "emptyDir" in vol:
            d = os.path.join(self.dir, "volumes", name)
            os.makedirs(d, exist_ok=True)
            os.chmod(d, 0o777)
        elif "configMap" in vol or "secret" in vol:
            if "configMap" in vol:
                data = c.config_map(vol["configMap"]["name"])
                mode = vol["configMap"].get("defaultMode", 0o644)
            else:
                data = c.secret(vol["secret"]["secretName"])
                mode = vol["secret"].get("defaultMode", 0o644)
            d = os.path.join(self.dir, "volumes", name)
            os.makedirs(d, exist_ok=True)
            for k, v in data.items():
                p = os.path.join(d, k)
                with open(p, "w") as f:
                    f.write(v)
                os.chmod(p, mode)
                if fs_group is not None and c.root:
                    os.chown(p, 0, fs_group)
            fs_group = None
        else:
            raise RuntimeError(f"pod {self.name}: volume kind of {vol} not emulated")
        if fs_group is not None and c.root:
            for base, dirs, files in os.walk(d):
                for p in [base] + [os.path.join(base, x) for x in files]:
                    os.chown(p, -1, fs_group)
                    os.chmod(p, os.stat(p).st_mode | 0o060 | (0o2010 if os.path.isdir(p) else 0))
        self.volumes[name] = d
        return d

    # ---- environment and arguments ------------------------------------------------------
    def env_of(self, ctr):
        env = {}
        for e in ctr.get("env", []):
            if "value" in e:
                env[e["name"]] = expand(e["value"], env)
                continue
            ref = e["valueFrom"]
            if "secretKeyRef" in ref:
                r = ref["secretKeyRef"]
                env[e["name"]] = self.cluster.secret(r["name"])[r["key"]]
            elif "configMapKeyRef" in ref:
                r = ref["configMapKeyRef"]
                env[e["name"]] = self.cluster.config_map(r["name"])[r["key"]]
            elif "fieldRef" in ref:
                path = ref["fieldRef"]["fieldPath"]
                env[e["name"]] = {"metadata.name": self.name,
                                  "metadata.namespace": self.cluster.namespace,
                                  "status.podIP": self.ip, "spec.nodeName": self.name}[path]
            elif "resourceFieldRef" in ref:
                r = ref["resourceFieldRef"]
                target = ctr
                if r.get("containerName"):
                    target = next(x for x in self.spec["containers"] if x["name"] == r["containerName"])
                kind, res = r["resource"].split(".")
                value = parse_quantity(target.get("resources", {}).get(kind, {}).get(res, 0))
                env[e["name"]] = str(math.ceil(value / parse_quantity(r.get("divisor", "1"))))
            else:
                raise RuntimeError(f"env {e['name']}: valueFrom {ref} not emulated")
        if self.spec.get("enableServiceLinks", True):
            env.update(self.cluster.service_links())
        return env

    def argv_of(self, ctr, env):
        command = ctr.get("command") or self.cluster.entrypoint
        args = ctr.get("args") if "args" in ctr or "command" in ctr else []
        return [expand(a, env) for a in list(command) + list(args or [])]

    # ---- running containers -------------------------------------------------------------
    def start(self, ctr):
        c = self.cluster
        env = self.env_of(ctr)
        argv = self.argv_of(ctr, env)
        log = os.path.join(self.dir, f"{ctr['name']}.{len(os.listdir(self.dir))}.log")
        sc = dict(self.spec.get("securityContext", {}))
        sc.update(ctr.get("securityContext", {}))
        mounts = []
        for m in ctr.get("volumeMounts", []):
            vol = next(v for v in self.spec.get("volumes", []) if v["name"] == m["name"])
            mounts.append({"source": self.volume_dir(vol), "path": m["mountPath"],
                           "readOnly": bool(m.get("readOnly"))})
        base_env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOSTNAME": self.name}
        base_env.update(env)
        if c.root:
            spec = self.root_spec(ctr, sc, mounts, argv, base_env)
            path = os.path.join(self.dir, f"{ctr['name']}.spec.json")
            json.dump(spec, open(path, "w"))
            cmd = ["ip", "netns", "exec", self.netns, "unshare", "--mount", "--uts",
                   "--propagation", "private", sys.executable, os.path.join(HERE, "launch.py"), path]
            run_env = {}
        else:
            cmd = [c.binary] + [c.substitute(self, a, mounts) for a in argv[1:]]
            run_env = {k: c.substitute(self, v, mounts) for k, v in base_env.items()}
            run_env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
        out = open(log, "w")
        cgroups = c.cgroups_for(self, ctr)

        def join_cgroups():  # before `ip netns exec`, which mounts a /sys without cgroups
            for procs in cgroups:
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))
        proc = subprocess.Popen(cmd, env=run_env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=join_cgroups)
        k = Container(self, ctr, proc, log)
        self.containers[ctr["name"]] = k
        c.running.append(k)
        return k

    def root_spec(self, ctr, sc, mounts, argv, env):
        c = self.cluster
        root = os.path.join(self.dir, f"root-{ctr['name']}-{len(os.listdir(self.dir))}")
        subprocess.run(["cp", "-al", c.rootfs, root], check=True)
        for d in ("proc", "dev", "sys"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        files = {"/etc/hosts": f"127.0.0.1\tlocalhost\n::1\tlocalhost\n{self.ip}\t{self.name}\n",
                 "/etc/resolv.conf": (f"search {c.namespace}.svc.cluster.local svc.cluster.local "
                                      f"cluster.local\nnameserver {c.bridge_ip}\noptions ndots:5\n"),
                 "/etc/hostname": self.name + "\n"}
        for path, text in files.items():
            src = os.path.join(self.dir, path.strip("/").replace("/", "_"))
            with open(src, "w") as f:
                f.write(text)
            os.chmod(src, 0o644)
            mounts = mounts + [{"source": src, "path": path, "readOnly": False}]
        for m in mounts:
            target = os.path.join(root, m["path"].lstrip("/"))
            if os.path.isdir(m["source"]):
                os.makedirs(target, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                open(target, "a").close()
        uid = sc.get("runAsUser", c.image_uid)
        if sc.get("runAsNonRoot") and uid == 0:
            raise RuntimeError(f"{self.name}/{ctr['name']}: runAsNonRoot with user 0: the kubelet refuses to start it")
        gid = sc.get("runAsGroup", c.image_gid if "runAsUser" not in sc else 0)
        groups = sorted({g for g in [gid, sc.get("fsGroup")] + sc.get("supplementalGroups", []) if g is not None})
        caps = sc.get("capabilities", {})
        keep = set() if "ALL" in caps.get("drop", []) else set(c.default_caps)
        keep = (keep - set(caps.get("drop", []))) | set(caps.get("add", []))
        return {"root": root, "mounts": mounts, "hostname": self.name,
                "readOnlyRoot": bool(sc.get("readOnlyRootFilesystem")),
                "uid": uid, "gid": gid, "groups": groups, "keepCaps": sorted(keep),
                "noNewPrivs": sc.get("allowPrivilegeEscalation") is False,
                "cwd": ctr.get("workingDir", "/"), "argv": argv, "env": env}

    def run_init(self, deadline):
        """Runs the init containers in order, each until it exits 0 (restarted after a
        failure, as the kubelet does, with a shorter backoff)."""
        for ctr in self.spec.get("initContainers", []):
            delay = 0.5
            while True:
                k = self.start(ctr)
                code = k.wait(max(1, deadline - time.monotonic()))
                if code == 0:
                    break
                if code is None or time.monotonic() + delay > deadline:
                    k.signal(signal.SIGKILL)
                    raise RuntimeError(f"init container {self.name}/{ctr['name']} did not succeed:\n{k.log()[-3000:]}")
                time.sleep(delay)
                delay = min(delay * 2, 4)

    def start_containers(self):
        return [self.start(ctr) for ctr in self.spec["containers"]]


def expand(s, env):
    """The kubelet's $(VAR) expansion ($$ escapes; unknown references stay)."""
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", sub, s)


class Cluster:
    """The emulated cluster: rendered objects, pods, Services (DNS), probes."""

    def __init__(self, objects, binary, rootfs, entrypoint, image_user, work, secrets):
        self.objects = objects
        self.binary, self.rootfs, self.entrypoint = binary, rootfs, entrypoint
        self.image_uid, self.image_gid = image_user
        self.work = work
        self.operator_secrets = secrets
        self.namespace = next(o["metadata"].get("namespace") for o in objects
                              if o["kind"] in ("Deployment", "Job"))
        # DEPLOY_CHECK_LOOPBACK=1 runs the loopback variant even as root.
        self.root = os.geteuid() == 0 and netns_usable() and os.environ.get("DEPLOY_CHECK_LOOPBACK") != "1"
        self.tag = f"csk{os.getpid() % 100000}"
        self.bridge = f"{self.tag}br"
        self.bridge_ip = f"{SUBNET}.1" if self.root else "127.0.0.1"
        self.pods, self.running, self.cgroup_dirs = [], [], []
        self.records = {}
        self.dns = None
        self.default_caps = ["CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW",
                             "SETGID", "SETUID", "SETFCAP", "SETPCAP", "NET_BIND_SERVICE",
                             "SYS_CHROOT", "KILL", "AUDIT_WRITE"]
        self.memcg = "/sys/fs/cgroup/memory" if os.path.isdir("/sys/fs/cgroup/memory") else None
        os.makedirs(work, exist_ok=True)
        if self.root:
            sh(f"ip link add {self.bridge} type bridge")
            sh(f"ip addr add {self.bridge_ip}/24 dev {self.bridge}")
            sh(f"ip link set {self.bridge} up")
            self.dns = Dns(self.bridge_ip, self.records)
            self.dns.start()

    def mode(self):
        return "network namespaces" if self.root else "loopback"

    def pod_ip(self, index):
        return f"{SUBNET}.{10 + index}" if self.root else f"127.0.0.{10 + index}"

    def find(self, kind, name):
        for o in self.objects:
            if o["kind"] == kind and o["metadata"]["name"] == name:
                return o
        raise RuntimeError(f"the manifests have no {kind} {name}")

    def config_map(self, name):
        return dict(self.find("ConfigMap", name).get("data", {}))

    def secret(self, name):
        for o in self.objects:
            if o["kind"] == "Secret" and o["metadata"]["name"] == name:
                return dict(o.get("stringData", {}))
        if name in self.operator_secrets:
            return self.operator_secrets[name]
        raise RuntimeError(f"Secret {name} is neither in the manifests nor created by the operator")

    def claim_dir(self, claim):
        d = os.path.join(self.work, "claims", claim)
        os.makedirs(d, exist_ok=True)
        return d

    def service_links(self):
        env = {}
        for s in self.objects:
            if s["kind"] != "Service":
                continue
            ip = self.service_ip(s) or ""
            base = s["metadata"]["name"].upper().replace("-", "_")
            ports = s["spec"]["ports"]
            env[f"{base}_SERVICE_HOST"] = ip
            env[f"{base}_SERVICE_PORT"] = str(ports[0]["port"])
            env[f"{base}_PORT"] = f"tcp://{ip}:{ports[0]['port']}"
        return env

    def service_ip(self, svc):
        """The address of the pod behind a Service (it must have one pod), checking that the
        Service's port reaches the same port number on the container."""
        pods = [p for p in self.pods if labels_match({"matchLabels": svc["spec"]["selector"]}, p.labels)]
        if not pods:
            return None
        if len(pods) > 1:
            raise RuntimeError(f"Service {svc['metadata']['name']} selects {len(pods)} pods; the harness maps one")
        for port in svc["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            number = container_port(pods[0].spec, target)
            if number != port["port"]:
                raise RuntimeError(f"Service {svc['metadata']['name']}: port {port['port']} -> {target} = "
                                   f"{number}; the harness needs them equal")
        return pods[0].ip

    def add_pod(self, name, template):
        pod = Pod(self, name, template, len(self.pods))
        self.pods.append(pod)
        if self.root:
            ns, veth = pod.netns, f"{self.tag}v{len(self.pods)}"
            sh(f"ip netns add {ns}")
            sh(f"ip link add {veth} type veth peer name eth0 netns {ns}")
            sh(f"ip link set {veth} master {self.bridge} up")
            sh(f"ip -n {ns} addr add {pod.ip}/24 dev eth0")
            sh(f"ip -n {ns} link set eth0 up")
            sh(f"ip -n {ns} link set lo up")
        for s in self.objects:
            if s["kind"] == "Service":
                ip = self.service_ip(s)
                if ip:
                    n = s["metadata"]["name"]
                    self.records[f"{n}.{self.namespace}.svc.cluster.local"] = ip
        return pod

    def substitute(self, pod, value, mounts):
        """Loopback mode: what a pod's namespaces would have done, done on the string."""
        for m in sorted(mounts, key=lambda m: -len(m["path"])):
            value = re.sub(r"(^|=)" + re.escape(m["path"]), lambda x: x.group(1) + m["source"], value)
        for name, ip in self.records.items():
            short = name.split(".")[0]
            value = re.sub(r"(//|^)" + re.escape(short) + r"(?=[:/]|$)", lambda x: x.group(1) + ip, value)
        return value.replace("0.0.0.0:", pod.ip + ":")

    def cgroups_for(self, pod, ctr):
        """The container's memory cgroup, inside its pod's (limited like the kubelet's pod
        cgroup: the larger of the containers' sum and any init container's limit), so the
        page cache an init container fills stays charged to the pod."""
        if not self.memcg:
            return []
        limit = lambda c: parse_quantity(c.get("resources", {}).get("limits", {}).get("memory", 0))  # noqa: E731
        pod_limit = max([sum(limit(c) for c in pod.spec["containers"])] +
                        [limit(c) for c in pod.spec.get("initContainers", [])])
        pod_dir = os.path.join(self.memcg, self.tag, pod.name)
        d = os.path.join(pod_dir, f"{ctr['name']}-{len(self.cgroup_dirs)}")
        try:
            for path, value in ((pod_dir, pod_limit), (d, limit(ctr))):
                if not os.path.isdir(path):
                    os.makedirs(path)
                    self.cgroup_dirs.append(path)
                    if value:
                        with open(os.path.join(path, "memory.limit_in_bytes"), "w") as f:
                            f.write(str(int(value)))
        except OSError:
            return []
        return [os.path.join(d, "cgroup.procs")]

    def peak_memory(self, pod):
        """(peak bytes, limit) of a pod's memory cgroup, page cache included, if there is one."""
        d = os.path.join(self.memcg or "/nonexistent", self.tag, pod.name)
        try:
            return (int(open(os.path.join(d, "memory.max_usage_in_bytes")).read()),
                    int(open(os.path.join(d, "memory.limit_in_bytes")).read()))
        except OSError:
            return None

    def run_probe(self, pod, ctr, p):
        timeout = p.get("timeoutSeconds", 1)
        try:
            if "httpGet" in p:
                h = p["httpGet"]
                conn = http.client.HTTPConnection(pod.ip, container_port(pod.spec, h["port"], ctr), timeout=timeout)
                conn.request("GET", h.get("path", "/"))
                r = conn.getresponse()
                body = r.read().decode(errors="replace")
                return 200 <= r.status < 400, f"{r.status} {body.strip()}"
            if "grpc" in p:
                import grpc
                from grpc_health.v1 import health_pb2, health_pb2_grpc
                with grpc.insecure_channel(f"{pod.ip}:{p['grpc']['port']}") as ch:
                    stub = health_pb2_grpc.HealthStub(ch)
                    r = stub.Check(health_pb2.HealthCheckRequest(service=p["grpc"].get("service", "")),
                                   timeout=timeout)
                    status = health_pb2.HealthCheckResponse.ServingStatus.Name(r.status)
                    return r.status == health_pb2.HealthCheckResponse.SERVING, status
            if "tcpSocket" in p:
                port = container_port(pod.spec, p["tcpSocket"]["port"], ctr)
                socket.create_connection((pod.ip, port), timeout=timeout).close()
                return True, "connected"
        except Exception as e:  # a probe that cannot connect has failed
            return False, f"{type(e).__name__}: {e}"
        raise RuntimeError(f"probe {p} not emulated")

    def cleanup(self):
        for k in self.running:
            if k.alive():
                try:
                    os.killpg(k.proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                k.wait(5)
        if self.dns:
            self.dns.sock.close()
        if self.root:
            for p in self.pods:
                subprocess.run(["ip", "netns", "del", p.netns], stderr=subprocess.DEVNULL)
            subprocess.run(["ip", "link", "del", self.bridge], stderr=subprocess.DEVNULL)
        for d in sorted(self.cgroup_dirs, key=len, reverse=True):
            try:
                os.rmdir(d)
            except OSError:
                pass
        if self.memcg:
            try:
                os.rmdir(os.path.join(self.memcg, self.tag))
            except OSError:
                pass


def container_port(pod_spec, port, ctr=None):
    """A port number, or a port name looked up in the pod's containers."""
    if isinstance(port, int):
        return port
    if str(port).isdigit():
        return int(port)
    for c in ([ctr] if ctr else []) + pod_spec["containers"]:
        for p in c.get("ports", []):
            if p.get("name") == port:
                return p["containerPort"]
    raise RuntimeError(f"no container port named {port}")


def sh(cmd):
    subprocess.run(cmd.split(), check=True)


def netns_usable():
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        return False
    probe = f"csk{os.getpid() % 100000}p"
    ok = subprocess.run(["ip", "link", "add", probe, "type", "bridge"], stderr=subprocess.DEVNULL).returncode == 0
    if ok:
        subprocess.run(["ip", "link", "del", probe])
    return ok
