"""`stackbench new-stack DIR --like RUNTIME`: a starting stack of the user's own, a commented
manifest and a hello endpoint, which a suite then names by its folder (`stacks = ["./DIR"]`)."""

from pathlib import Path

from rich.console import Console

from stackbench.config.manifest import parse_manifest
from stackbench.config.names import check_name
from stackbench.errors import InputError

TEMPLATES = Path(__file__).with_name("newstack")
RUNTIMES = tuple(sorted(p.name for p in TEMPLATES.iterdir() if p.is_dir()))


def new_stack(console: Console, folder: Path, like: str) -> Path:
    """Write the RUNTIME template into `folder` (created; it must not hold a stack.toml yet)
    and check the manifest it wrote parses. Returns the manifest's path."""
    if like not in RUNTIMES:
        raise InputError(f"--like {like!r}: not one of {', '.join(RUNTIMES)}")
    name = check_name(folder.resolve().name, f"new-stack {folder}: the folder name")
    if (folder / "stack.toml").exists():
        raise InputError(f"new-stack {folder}: it already holds a stack.toml; choose a new folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for source in sorted((TEMPLATES / like).iterdir()):
            text = source.read_text().replace("__NAME__", name)
            (folder / source.name).write_text(text)
    except OSError as exc:
        raise InputError(f"new-stack {folder}: cannot write there: {exc.strerror}") from exc
    manifest = parse_manifest(folder / "stack.toml", catalog=False)
    console.print(f"wrote {folder}/ ({', '.join(sorted(p.name for p in folder.iterdir()))})")
    console.print(
        f'measure it beside a catalog stack: a suite with stacks = ["./{folder.name}", ...] '
        f"(its path is read from the suite file's folder), workloads = {list(manifest.workloads)}"
    )
    return folder / "stack.toml"
