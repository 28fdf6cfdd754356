"""Regenerates the workload fixtures byte for byte (they are committed; a test checks them).

random-64k.bin: 65,536 pseudo-random bytes, SHA-256 in counter mode over a fixed label, so
every stack hashes the very same file and anyone can recreate it without trusting a download.
demo.txt: 8 KiB of readable text for the /readfile workload.
"""

import hashlib
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RANDOM_SIZE = 65536
DEMO_SIZE = 8192


def random_64k() -> bytes:
    blocks = (
        hashlib.sha256(b"stackbench random-64k " + i.to_bytes(4, "big")).digest()
        for i in range(RANDOM_SIZE // 32)
    )
    return b"".join(blocks)


def demo_text() -> bytes:
    line = b"The quick brown fox jumps over the lazy dog; stackbench reads this file.\n"
    text = line * (DEMO_SIZE // len(line) + 1)
    return text[: DEMO_SIZE - 1] + b"\n"


def main() -> None:
    FIXTURES.mkdir(exist_ok=True)
    (FIXTURES / "random-64k.bin").write_bytes(random_64k())
    (FIXTURES / "demo.txt").write_bytes(demo_text())


if __name__ == "__main__":
    main()
