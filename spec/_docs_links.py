"""Where the documentation page of a requirement lives: one URL scheme for every report.

The docs site (``mkdocs build``, see ``docs/contributing.md``) renders one page per
requirement area from the catalogue, ``requirements/<area in lower case>.html``, with an
anchor per requirement id. Reports link each id there, under a base URL read from
:data:`DOCS_URL_ENV` when it is set (``harness-testkit --docs-url URL`` sets it), else the
``site/`` folder a ``mkdocs build`` writes in the checkout the kit runs from.

Typical use::

    from harness_testkit.spec import requirement_url

    requirement_url("FILTER-007", base_url="https://example.org/harness-testkit/")
    # 'https://example.org/harness-testkit/requirements/filter.html#FILTER-007'
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

from ._errors import HarnessUsageError

__all__ = ["DOCS_URL_ENV", "docs_base_url", "requirement_page", "requirement_url"]

DOCS_URL_ENV: Final = "HARNESS_TESTKIT_DOCS_URL"
"""The environment variable holding the docs site's base URL (the folder of its index)."""

_ID: Final = re.compile(r"^([A-Z]+)-\d{3}$")


def docs_base_url() -> str:
    """The base URL reports link requirement pages under, ending in ``/``.

    Returns:
        :data:`DOCS_URL_ENV` when it is set and not empty, else a ``file://`` URL of the
        ``site/`` folder beside the kit's source folders (where ``mkdocs build`` writes in
        a checkout).
    """
    configured = os.environ.get(DOCS_URL_ENV, "").strip()
    if configured:
        return configured if configured.endswith("/") else configured + "/"
    # This module is spec/_docs_links.py in a checkout: its grandparent is the root that
    # holds mkdocs.yml and the site/ folder the build writes.
    return (Path(__file__).resolve().parents[1] / "site").as_uri() + "/"


def requirement_page(area: str) -> str:
    """The page of a requirement area, relative to the docs site's base URL.

    Args:
        area: An area code such as ``FILTER``.

    Returns:
        ``requirements/<area in lower case>.html``.
    """
    return f"requirements/{area.lower()}.html"


def requirement_url(requirement_id: str, *, base_url: str | None = None) -> str:
    """The URL of a requirement's anchor on its area's page.

    Args:
        requirement_id: A catalogue id such as ``FILTER-007``.
        base_url: The docs site's base URL; default :func:`docs_base_url`.

    Returns:
        ``<base>requirements/<area>.html#<id>``.

    Raises:
        HarnessUsageError: ``requirement_id`` is not of the form ``AREA-NNN``.
    """
    match = _ID.match(requirement_id)
    if match is None:
        raise HarnessUsageError(
            f"{requirement_id!r} is not a requirement id; pass one of the form AREA-NNN, "
            "such as FILTER-007."
        )
    base = docs_base_url() if base_url is None else base_url
    if not base.endswith("/"):
        base += "/"
    return f"{base}{requirement_page(match.group(1))}#{requirement_id}"
