"""Standalone timing (docs/contracts.md section 5): `script.py WORKLOAD QUERY ITERATIONS` runs
the workload's code ITERATIONS times in this process, then prints the last body."""

import sys
from urllib.parse import parse_qsl

import compute


def main() -> int:
    workload, query_text, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3])
    handler = compute.TEXT_WORKLOADS.get(workload)
    if handler is None:
        print(f"script.py: no standalone code for {workload!r}", file=sys.stderr)
        return 2
    query = dict(parse_qsl(query_text, keep_blank_values=True))
    body = ""
    for _ in range(iterations):
        body = handler(query)
    sys.stdout.write(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
