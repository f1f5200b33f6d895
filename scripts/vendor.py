"""Fill static/vendor/ with the UI's front-end files, pinned and checked.

Each package is fetched by name and version with the npm client (`npm pack`, which uses whatever
registry npm is configured for), the tarball is checked against its pinned integrity hash, and
every file taken from it against its pinned sha256. Nothing is loaded from a CDN at run time:
the files are committed and served by the app (WhiteNoise).

    python scripts/vendor.py           # fetch, check, write static/vendor/
    python scripts/vendor.py --check   # only check the committed files against the pins

To upgrade: change a version, run once with --print-hashes, review, paste the new hashes.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VENDOR_DIR = Path(__file__).resolve().parent.parent / "static" / "vendor"

# package → version, tarball integrity (sha512, as npm reports it) and {file in tarball: (dest, sha256)}
PINS = {
    "htmx.org": {
        "version": "2.0.11",  # the latest 2.x; 4.x changes the attribute API
        "integrity": "sha512-Thx/WtpeOQqSrqBCw/A1cwGJGg4UrVa3+sW0GmrM3p4gJgO89ecH4qtbnyzDDWFvBTqjnIMCgELTNt636dtamA==",
        "files": {
            "package/dist/htmx.min.js": (
                "htmx/htmx.min.js", "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"),
            "package/LICENSE": (
                "htmx/LICENSE", "d3d2456f76414f2456104660ebd65aff1c04cd7966b942bdabd63f3cdb316a38"),
        },
    },
    "cytoscape": {
        "version": "3.35.0",
        "integrity": "sha512-sMvBIXiGMnhkCaWz2R06FwF/27MNlS+Tqvi17foO9UhnUg3XGZccKjxsvEqQFAQYMSSZmN5SxYzUYlQ0DOJJ3g==",
        "files": {
            "package/dist/cytoscape.min.js": (
                "cytoscape/cytoscape.min.js", "71fa9ebec21a7ca2c40cff6aacc30d1f6464e363662ad4b2c197e1adc770cd94"),
            "package/LICENSE": (
                "cytoscape/LICENSE", "eb319c6e6f233607f71e8e2f450391751883cfc0eeb3ca7ef574c13d1d9c2203"),
        },
    },
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def npm_pack(name: str, version: str, into: Path) -> Path:
    out = subprocess.run(["npm", "pack", f"{name}@{version}", "--json", "--pack-destination", str(into)],
                         check=True, capture_output=True, text=True).stdout
    return into / json.loads(out)[0]["filename"]


def integrity_of(tarball: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()


def fetch(name: str, pin: dict, workdir: Path, print_hashes: bool) -> list[str]:
    errors = []
    tarball = npm_pack(name, pin["version"], workdir)
    if integrity_of(tarball) != pin["integrity"]:
        errors.append(f"{name}@{pin['version']}: tarball integrity {integrity_of(tarball)} != pinned")
    with tarfile.open(tarball) as archive:
        for member, (dest, expected) in pin["files"].items():
            data = archive.extractfile(member).read()
            if print_hashes:
                print(f"{name} {member}: {sha256(data)}")
            if sha256(data) != expected:
                errors.append(f"{name} {member}: sha256 {sha256(data)} != pinned {expected}")
                continue
            target = VENDOR_DIR / dest
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return errors


def check() -> list[str]:
    errors = []
    for name, pin in PINS.items():
        for dest, expected in pin["files"].values():
            path = VENDOR_DIR / dest
            if not path.exists():
                errors.append(f"{name}: {dest} missing")
            elif sha256(path.read_bytes()) != expected:
                errors.append(f"{name}: {dest} does not match its pinned sha256")
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only verify the committed files")
    parser.add_argument("--print-hashes", action="store_true", help="print each file's sha256 (for upgrades)")
    args = parser.parse_args()
    errors = []
    if not args.check:
        with tempfile.TemporaryDirectory() as tmp:
            for name, pin in PINS.items():
                errors += fetch(name, pin, Path(tmp), args.print_hashes)
    errors += check()
    for error in errors:
        print(error, file=sys.stderr)
    if not errors:
        print("static/vendor/: " + ", ".join(f"{n} {p['version']}" for n, p in PINS.items()) + " (checksums ok)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
