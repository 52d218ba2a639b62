"""Where the course lives: the one place the repository URL is set (badges and setup cells)."""

REPO = "paged-attention-course/paged-attention-course"
REPO_URL = f"https://github.com/{REPO}"
PIP_SPEC = f"git+{REPO_URL}"


def colab_badge(notebook: str) -> str:
    """Markdown for an "Open in Colab" badge pointing at `notebook` on the main branch."""
    url = f"https://colab.research.google.com/github/{REPO}/blob/main/notebooks/{notebook}"
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"
