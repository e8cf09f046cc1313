"""Read one feed: fetched over HTTP(S) within a time and size bound, parsed as RSS/Atom (feedparser) or as a JSON
search API's answer. Every failure is a FeedError whose message names the URL, in one line."""

from __future__ import annotations

import json
import re
import socket
import threading
import urllib.error
import urllib.request
import xml.sax
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from dun import __version__
from dun.core.errors import DunError
from dun.papers.model import MAX_AUTHORS, MAX_LINK, MAX_SUMMARY, MAX_TITLE, Paper, line, paper_id, text

CHUNK = 64 * 1024
# arXiv's RSS puts this before the abstract
_ANNOUNCE = re.compile(r"^arXiv:\S+ Announce Type: \S+ Abstract: ")
# XML errors of feeds in the wild that feedparser's lenient reading gets right: HTML entities (&eacute;) that XML
# does not define
READ_ANYWAY = frozenset({"undefined entity"})
# where a JSON answer keeps its list of papers, when it is not the top-level list itself
LIST_KEYS = ("data", "results", "items", "papers", "entries")


class FeedError(DunError):
    """A feed that could not be read or understood; the message starts with its URL."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    max_bytes: int
    max_entries: int


def check_url(url: str) -> str:
    """`url` when it is http or https with a host; FeedError otherwise (a file: or ftp: URL is never opened)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FeedError(f"{url}: not an http(s) URL")
    return url


def _opener() -> urllib.request.OpenerDirector:
    """HTTP and HTTPS only, redirects included (to http/https only), proxies from the environment: no file:,
    ftp: or data: handler, so neither a feed nor its redirect can make dun read anything else."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    urllib.request.HTTPRedirectHandler(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.HTTPDefaultErrorHandler()):
        opener.add_handler(handler)
    return opener


def fetch(url: str, limits: Limits) -> bytes:
    """The body of `url`, read within `limits.timeout_s` in all and at most `limits.max_bytes`; FeedError naming
    the URL for anything else. The download runs in a daemon thread so that no server, however slowly it answers,
    holds the command past the deadline."""
    check_url(url)
    outcome: list[bytes | FeedError] = []
    worker = threading.Thread(target=lambda: outcome.append(_download(url, limits)), daemon=True,
                              name="dun-papers-fetch")
    worker.start()
    worker.join(limits.timeout_s)
    if not outcome:
        raise FeedError(f"{url}: timed out after {limits.timeout_s:g} s (papers.timeout_s)")
    if isinstance(outcome[0], FeedError):
        raise outcome[0]
    return outcome[0]


def _download(url: str, limits: Limits) -> bytes | FeedError:
    request = urllib.request.Request(url, headers={
        "User-Agent": f"dun/{__version__} (paper watch)",
        "Accept": "application/atom+xml, application/rss+xml, application/xml, application/json;q=0.9, */*;q=0.5"})
    try:
        with _opener().open(request, timeout=limits.timeout_s) as response:
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > limits.max_bytes:
                return FeedError(f"{url}: {int(declared)} bytes, more than papers.max_bytes ({limits.max_bytes})")
            chunks: list[bytes] = []
            size = 0
            while True:
                chunk = response.read1(min(CHUNK, limits.max_bytes + 1 - size))
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
                size += len(chunk)
                if size > limits.max_bytes:
                    return FeedError(f"{url}: more than papers.max_bytes ({limits.max_bytes} bytes), not read "
                                     "further")
    except urllib.error.HTTPError as exc:
        return FeedError(f"{url}: HTTP {exc.code} {exc.reason}".rstrip())
    except urllib.error.URLError as exc:
        return FeedError(f"{url}: {_reason(exc.reason)}")
    except Exception as exc:  # any other failure of the network or the server is this feed's error, not a crash
        return FeedError(f"{url}: {_reason(exc)}")


def _reason(reason: object) -> str:
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return "timed out"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return f"host not found ({reason.strerror})"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror[:1].lower() + reason.strerror[1:]
    words = str(reason).strip() or type(reason).__name__
    return words.splitlines()[0]


def parse(url: str, data: bytes, limits: Limits) -> list[Paper]:
    """The papers of a feed's body: JSON when it looks like JSON, else RSS or Atom. At most `limits.max_entries`,
    in the feed's order; entries without a title or any id are skipped."""
    head = data[:64].lstrip()
    papers = _parse_json(url, data) if head[:1] in (b"{", b"[") else _parse_xml(url, data)
    return papers[:limits.max_entries]


def _parse_xml(url: str, data: bytes) -> list[Paper]:
    import feedparser  # only `dun papers poll` needs it

    try:
        parsed = feedparser.parse(data)  # bytes: feedparser fetches nothing itself
    except Exception as exc:  # feedparser's own bugs on hostile input are a bad feed, not a crash
        raise FeedError(f"{url}: not a readable feed ({type(exc).__name__})") from None
    entries = list(parsed.get("entries") or [])
    problem = parsed.get("bozo_exception")
    if isinstance(problem, xml.sax.SAXParseException) and problem.getMessage() not in READ_ANYWAY:
        # not well-formed (cut off, tags that do not match): what a lenient reading recovers may be wrong
        raise FeedError(f"{url}: not a well-formed feed (line {problem.getLineNumber()}: {problem.getMessage()}), "
                        "nothing recorded from it")
    if not entries and not parsed.get("version"):
        raise FeedError(f"{url}: not an RSS/Atom feed or JSON")
    papers = []
    for entry in entries:
        title = text(entry.get("title"), MAX_TITLE)
        link = line(entry.get("link"), MAX_LINK)
        native = str(entry.get("id") or "")
        if not title or not (link or native):
            continue
        authors = [text(a.get("name"), 100) for a in entry.get("authors") or [] if isinstance(a, dict)]
        if len(authors) == 1 and "," in authors[0]:  # arXiv's RSS: one dc:creator naming them all
            authors = [text(name, 100) for name in authors[0].split(",")]
        papers.append(Paper(
            id=paper_id(native=native, link=link, doi=_doi(entry.get("prism_doi")), title=title),
            title=title, link=link, authors=[a for a in authors if a][:MAX_AUTHORS],
            summary=_ANNOUNCE.sub("", text(entry.get("summary"), MAX_SUMMARY)),
            published=line(str(entry.get("published") or entry.get("updated") or ""), 40)))
    return papers


def _parse_json(url: str, data: bytes) -> list[Paper]:
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise FeedError(f"{url}: not valid JSON ({str(exc).splitlines()[0]})") from None
    records = document if isinstance(document, list) else next(
        (document[k] for k in LIST_KEYS if isinstance(document, dict) and isinstance(document.get(k), list)), None)
    if records is None:
        raise FeedError(f"{url}: JSON without a list of papers (a top-level list, or one under "
                        f"{', '.join(LIST_KEYS)})")
    return [paper for paper in (_json_paper(r) for r in records if isinstance(r, dict)) if paper is not None]


def _json_paper(record: dict[str, Any]) -> Paper | None:
    """A paper from one JSON record: the keys of the usual search APIs (title, abstract or summary, url or link,
    authors as names or {name}, externalIds {ArXiv, DOI}, paperId or id, publicationDate, published or year)."""
    title = text(record.get("title"), MAX_TITLE)
    ids = record.get("externalIds")
    external: dict[str, object] = ids if isinstance(ids, dict) else {}
    link = line(_first_str(record, "url", "link"), MAX_LINK)
    native = _first_str(record, "paperId", "id")
    if not title or not (link or native or external):
        return None
    authors = []
    for author in record.get("authors") or []:
        name = author.get("name") if isinstance(author, dict) else author
        if isinstance(name, str) and name.strip():
            authors.append(text(name, 100))
    published = _first_str(record, "publicationDate", "published", "date") or str(record.get("year") or "")
    return Paper(
        id=paper_id(arxiv=str(external.get("ArXiv") or record.get("arxivId") or ""),
                    doi=str(external.get("DOI") or record.get("doi") or ""), native=native, link=link, title=title),
        title=title, link=link or (f"https://arxiv.org/abs/{external['ArXiv']}" if external.get("ArXiv") else ""),
        authors=authors[:MAX_AUTHORS], summary=text(record.get("abstract") or record.get("summary"), MAX_SUMMARY),
        published=line(published, 40))


def _doi(value: object) -> str:
    return value if isinstance(value, str) and value.startswith("10.") else ""


def _first_str(record: Mapping[str, object], *keys: str) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""
