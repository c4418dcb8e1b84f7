#!/usr/bin/env python3
"""Writes each trace of bench/traces/ in trace format 1 to DIR, for a build older than
format 2 (one that says "trace version 2 (this build reads 1)").

    bench/trace-v1.py DIR [TRACE...]

Format 2 adds one field to format 1, a depth's `finer` counts (`bench refine-trace`); a
build of format 1 replays none of them, so the work it replays is the same. The header's
version becomes 1 and every `finer` goes; nothing else changes.
"""
import gzip
import json
import os
import sys
from pathlib import Path


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    traces = sys.argv[2:] or sorted(str(p) for p in Path("bench/traces").glob("trace-*.jsonl.gz"))
    for t in traces:
        lines = []
        with gzip.open(t, "rt") as f:
            for line in f:
                o = json.loads(line)
                if o.get("kind") == "header":
                    if o.get("version") not in (1, 2):
                        print(f"{t}: trace version {o.get('version')} (this reads 1 and 2)", file=sys.stderr)
                        return 1
                    o["version"] = 1
                o.pop("finer", None)
                lines.append(json.dumps(o, separators=(",", ":")))
        with gzip.open(out / os.path.basename(t), "wt") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
