"""Starts one container the way a container runtime would, inside the network and mount
namespaces it is already in (`ip netns exec NS unshare --mount --uts ... launch.py SPEC`).

SPEC (JSON): the container's root directory (a copy of the image's rootfs), the bind
mounts (volumes, /etc/hosts, /etc/resolv.conf), the hostname, the
user, groups, capabilities to keep, no_new_privs, read-only root, and argv/env/cwd.
Nothing here interprets the manifests: pods.py does that and writes SPEC.
"""

import ctypes
import json
import os
import socket
import subprocess
import sys

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
LAST_CAP = 40
CAPS = {
    "CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "FOWNER": 3, "FSETID": 4, "KILL": 5,
    "SETGID": 6, "SETUID": 7, "SETPCAP": 8, "NET_BIND_SERVICE": 10, "NET_RAW": 13,
    "SYS_CHROOT": 18, "MKNOD": 27, "AUDIT_WRITE": 29, "SETFCAP": 31,
}


def mount(*args):
    subprocess.run(["mount", *args], check=True)


def set_caps(libc, keep):
    """Bounding set and effective/permitted/inheritable reduced to `keep` (cap numbers)."""
    for cap in range(LAST_CAP + 1):
        if cap not in keep and libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err != 22:  # EINVAL: the kernel does not know this capability
                raise OSError(err, f"PR_CAPBSET_DROP {cap}")
    mask = 0
    for cap in keep:
        mask |= 1 << cap

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    hdr = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    for i in range(2):
        part = (mask >> (32 * i)) & 0xFFFFFFFF
        data[i].effective = data[i].permitted = part
        data[i].inheritable = 0
    if libc.capset(ctypes.byref(hdr), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def main():
    spec = json.load(open(sys.argv[1]))
    root = spec["root"]
    mount("--make-rprivate", "/")
    mount("--bind", root, root)
    for kind in ("proc", "dev", "sys"):
        mount("--rbind", "/" + kind, os.path.join(root, kind))
    for m in spec["mounts"]:
        target = os.path.join(root, m["path"].lstrip("/"))
        mount("--bind", m["source"], target)
        if m["readOnly"]:
            mount("-o", "remount,bind,ro", target)
    if spec["readOnlyRoot"]:
        mount("-o", "remount,bind,ro", root)
    socket.sethostname(spec["hostname"])
    libc = ctypes.CDLL(None, use_errno=True)
    os.chroot(root)
    os.chdir(spec["cwd"])
    keep = {CAPS[c] for c in spec["keepCaps"]}
    os.setgroups(spec["groups"])
    os.setgid(spec["gid"])
    if spec["uid"] == 0:
        set_caps(libc, keep)
    else:
        # setuid from 0 to another user clears every capability set (no keep-caps).
        os.setuid(spec["uid"])
    if spec["noNewPrivs"] and libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    os.execve(spec["argv"][0], spec["argv"], spec["env"])


if __name__ == "__main__":
    main()
