"""Publishing a built folder to the Hugging Face Hub: every configuration and split and the card, nothing else."""

from __future__ import annotations

import os
from pathlib import Path

from huggingface_hub import HfApi, get_token

from pipeline.dataset.manifest import build_configs, build_splits, read_manifest, shard_files
from pipeline.dataset.validate import check_build
from pipeline.errors import RoomspaceError


def upload_plan(out: Path) -> list[str]:
    """The files `push` sends, relative to the folder: the card and the shards the manifest lists. A
    folder that is not a finished build, or fails any check of `validate.check_build` (everything
    `validate` checks but re-deriving rows), is refused with the check's message."""
    manifest = read_manifest(out)
    check_build(out, manifest)
    shards = {str(path.relative_to(out)) for config in build_configs(manifest) for split in build_splits(manifest)
              for path in shard_files(out, manifest, config, split)}  # a shared file once
    return sorted(["README.md", *shards])


def push(out: Path, repo: str, private: bool) -> str:
    """Upload the build to the dataset repository `repo`; the folder's checks (`upload_plan`), then the
    token's and the network's, all run before anything is sent."""
    files = upload_plan(out)
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        raise RoomspaceError("HF_HUB_OFFLINE is set: nothing was sent; unset it to push")
    token = get_token()
    if token is None:
        raise RoomspaceError("no Hugging Face token: run `hf auth login` or set HF_TOKEN; nothing was sent")
    api = HfApi(token=token)
    try:
        api.whoami()
    except Exception as error:  # any failure here means the Hub cannot be used; say which
        raise RoomspaceError(f"cannot reach the Hugging Face Hub ({type(error).__name__}: {error}); nothing was sent") from None
    api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
    commit = api.upload_folder(folder_path=out, repo_id=repo, repo_type="dataset", allow_patterns=files,
                               commit_message=f"Upload {out.name} built by roomspace")
    return commit.commit_url
