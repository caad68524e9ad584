"""The documentation site: built in strict mode, opened in a real headless browser.

The site is built from mkdocs.yml into a temporary directory (``mkdocs build --strict``: any
warning, such as a broken link or a docstring mkdocstrings cannot parse, fails the build),
served over HTTP on localhost, and loaded by Chromium: the API page must render the reference
generated from the docstrings, the search index must load and answer a query, and no internal
link of any page may point to a missing file or anchor. The built pages are also read as a reader
sees them: signatures with the default values, contents without duplicate labels, nothing
fetched from other hosts, and search that answers from file:// (the README's site/index.html).

Needs the ``docs`` extra (mkdocs) and a Chromium binary (Debian: ``apt-get install chromium``);
the tests skip, saying which is missing, without them. ``SVMMAP_CHROMIUM`` names another binary.
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest

# Builds the site and drives Chromium (`pytest -m "not slow"` leaves it out).
pytestmark = [pytest.mark.slow, pytest.mark.docs]

ROOT = Path(__file__).resolve().parents[2]

#: A page that opens the API page with a search query in a frame and reports what the search
#: shows. Its load event waits for the image /__hold, which the server releases once the
#: report arrives, so that --dump-dom sees the finished page (the search index is built by a
#: web worker after the page's own load event).
HARNESS = """<!doctype html><html><body>
<iframe id="f" src="{page}?q={query}" width="1200" height="900"></iframe>
<pre id="out"></pre>
<img src="__hold" alt="">
<script>
const f = document.getElementById("f");
const t0 = Date.now();
function poll() {
  const doc = f.contentDocument;
  const items = doc ? doc.querySelectorAll(".md-search-result__item") : [];
  if (items.length || Date.now() - t0 > 30000) {
    const meta = doc && doc.querySelector(".md-search-result__meta");
    const report = {n: items.length, meta: meta ? meta.textContent.trim() : null,
                    links: Array.from(items).map(i => (i.querySelector("a") || {}).href || "")};
    document.getElementById("out").textContent = JSON.stringify(report);
    fetch("__report", {method: "POST", body: JSON.stringify(report)});
  } else setTimeout(poll, 100);
}
poll();
</script></body></html>
"""


def chromium_binary():
    names = [
        os.environ.get("SVMMAP_CHROMIUM", ""),
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    for name in names:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="the docs extra is not installed: pip install '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out


class _Handler(SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/__hold"):
            self.server.report_ready.wait(40)
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.report = json.loads(body)
        self.server.report_ready.set()
        self.send_response(204)
        self.end_headers()

    def log_request(self, code="-", size="-"):
        self.server.served.append((urlsplit(self.path).path, int(code)))

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    (site / "__harness.html").write_text(HARNESS.replace("{page}", "api.html").replace("{query}", "eval_group"))
    # The query a LightGBM user types first; the page is not the one of the answer.
    early = HARNESS.replace("{page}", "index.html").replace("{query}", "early%20stopping")
    (site / "__harness_early.html").write_text(early)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(site)))
    httpd.served, httpd.report, httpd.report_ready = [], None, threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    binary = chromium_binary()
    if binary is None:
        pytest.skip("no Chromium binary found (apt-get install chromium, or set SVMMAP_CHROMIUM)")
    return binary


def dump_dom(browser, url, tmp_path):
    run = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_api_page_renders_the_docstrings(server, browser, tmp_path):
    port = server.server_address[1]
    dom = dump_dom(browser, f"http://127.0.0.1:{port}/api.html", tmp_path)
    assert "<title>API reference - svmmap</title>" in dom
    # Headings generated from the docstrings, and the numpydoc sections rendered as tables.
    for text in (
        "svmmap.estimator.SVMMap",
        "svmmap.binning.Binner",
        "svmmap.io.load_letor",
        "svmmap.ir.trec.Qrels",
        "evals_result_",
        "eval_group",
        "read_group_file",
    ):
        assert text in dom, text
    assert 'class="doc doc-heading"' in dom
    # The browser loaded the page's scripts and styles; nothing it asked for was missing.
    assert "/assets/javascripts/" in " ".join(p for p, _ in server.served)
    assert not [(p, c) for p, c in server.served if c >= 400]
    # The theme's script ran: it marks the document as having JavaScript.
    assert "md-search__input" in dom


def test_search_index_loads_and_answers(server, browser, tmp_path):
    port = server.server_address[1]
    dom = dump_dom(browser, f"http://127.0.0.1:{port}/__harness.html", tmp_path)
    assert ("/search/search_index.json", 200) in server.served
    report = server.report
    assert report is not None and report["n"] >= 1, report
    assert report["meta"].endswith("matching documents") or report["meta"] == "1 matching document", report
    pages = {urlsplit(link).path for link in report["links"]}
    assert "/api.html" in pages and "/guide/ecosystem.html" in pages, report
    # The page the browser finished with shows the same report.
    shown = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    assert shown is not None and json.loads(html.unescape(shown.group(1))) == report


def test_search_finds_the_early_stopping_page_first(server, browser, tmp_path):
    # The first answer to "early stopping" is the page about it, not a section that merely
    # mentions it (it was a progress callback that stopped on the duality gap).
    server.report = None
    server.report_ready.clear()
    port = server.server_address[1]
    dump_dom(browser, f"http://127.0.0.1:{port}/__harness_early.html", tmp_path)
    report = server.report
    assert report is not None and report["n"] >= 1, report
    assert urlsplit(report["links"][0]).path == "/guide/early-stopping.html", report["links"][:5]


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key) is not None and not (tag == "link" and a.get("rel") in ("canonical",)):
                self.links.append(a[key])


def test_no_broken_internal_link(site):
    pages = {}
    for page in site.rglob("*.html"):
        if page.name.startswith("__harness"):
            continue
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        pages[page.resolve()] = parser
    broken = []
    for page, parser in pages.items():
        for link in parser.links:
            if urlsplit(link).scheme or link.startswith(("//", "mailto:", "data:")):
                continue
            target, fragment = urldefrag(link)
            path = urlsplit(target).path
            if not path:
                dest = page
            elif path.startswith("/"):
                # Root-relative, as the 404 page's links are (it is served for any path).
                dest = (site / unquote(path).lstrip("/")).resolve()
            else:
                dest = (page.parent / unquote(path)).resolve()
            if dest.is_dir():
                dest = dest / "index.html"
            if not dest.exists():
                broken.append(f"{page.relative_to(site.resolve())}: {link} (no file)")
            elif fragment and dest.suffix == ".html" and unquote(fragment) not in pages[dest].ids:
                broken.append(f"{page.relative_to(site.resolve())}: {link} (no anchor)")
    assert len(pages) >= 15
    assert not broken, "\n".join(broken[:40])


# --- The site as a reader sees it: signatures, contents, offline use (issue 27). ---------------


def _text(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _signature(page, anchor):
    """The rendered signature of the object whose heading has id ``anchor`` (its text)."""
    start = page.index(f'id="{anchor}"')
    block = re.search(r'<div class="doc-signature[^"]*"[^>]*>(.*?)</div>', page[start:], re.S)
    assert block is not None, anchor
    return _text(block.group(1))


@pytest.mark.parametrize(
    ("anchor", "obj"),
    [
        ("svmmap.estimator.SVMMap", "svmmap.SVMMap"),
        ("svmmap.model_selection.SVMMapCV", "svmmap.SVMMapCV"),
        ("svmmap.binning.Binner", "svmmap.Binner"),
        ("svmmap.dask.SVMMap", "svmmap.dask.SVMMap"),
        ("svmmap.baselines.SVMAcc", "svmmap.baselines.SVMAcc"),
        ("svmmap.ir.fusion.RunFusion", "svmmap.ir.fusion.RunFusion"),
    ],
)
def test_signatures_show_the_default_values(site, anchor, obj):
    """A default of the one table reads as its value (``C=1.0``), not ``C=TRAINING_DEFAULTS['C']``."""
    import ast
    import importlib
    import inspect

    page = (site / "api.html").read_text(encoding="utf-8")
    assert not re.search(r"(?<![\w.])(_\w*|[A-Z]+_)DEFAULTS\[|(?<![\w.])_D\[", _text(page))
    module, _, name = obj.rpartition(".")
    if module == "svmmap.dask":
        pytest.importorskip("dask", reason="the dask extra is not installed")
    runtime = getattr(importlib.import_module(module), name)
    # The rendered parameter list is Python: read it as the parameters of a function.
    text = _signature(page, anchor)
    args = ast.parse(f"def f({text[text.index('(') + 1 : text.rindex(')')]}): pass").body[0].args
    positional = args.posonlyargs + args.args
    shown = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults))
    shown.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    checked = 0
    for parameter in inspect.signature(runtime).parameters.values():
        default = parameter.default
        if isinstance(default, (bool, int, float, str)) or default is None:
            assert parameter.name in shown, (parameter.name, shown)
            assert ast.literal_eval(shown[parameter.name]) == default, (parameter.name, shown)
            checked += 1
    assert checked >= 3


def _toc(page):
    """The page's table of contents (right sidebar): (anchor, label) in order."""
    # The last copy: the theme also repeats it inside the navigation, for narrow screens.
    secondary = page[page.rindex('<nav class="md-nav md-nav--secondary"') :]
    secondary = secondary[: secondary.index('<div class="md-content"')]
    links = re.findall(r'<a href="#([^"]+)"[^>]*>\s*<span class="md-ellipsis">(.*?)</span>', secondary, re.S)
    return [(anchor, " ".join(_text(label).split())) for anchor, label in links]


def test_contents_name_each_class_once(site):
    """SVMMap and Binner exist twice (in memory and on Dask): the contents tell them apart, and
    no class or section of the API page appears under the label of another."""
    page = (site / "api.html").read_text(encoding="utf-8")
    toc = dict(_toc(page))
    assert toc["svmmap.estimator.SVMMap"] != toc["svmmap.dask.SVMMap"]
    assert toc["svmmap.binning.Binner"] != toc["svmmap.dask.Binner"]
    assert "dask" in toc["svmmap.dask.SVMMap"] and "dask" in toc["svmmap.dask.Binner"]
    # Page sections and documented objects (methods excepted: every estimator has a fit).
    level2 = set(re.findall(r'<h2 id="([^"]+)"', page))
    labels = [label for anchor, label in _toc(page) if anchor in level2]
    assert len(labels) >= 20
    assert len(labels) == len(set(labels)), sorted(x for x in labels if labels.count(x) > 1)


def test_api_page_shows_public_paths_and_no_docstring_headings(site):
    page = (site / "api.html").read_text(encoding="utf-8")
    ids = re.findall(r'<h[1-6] id="([^"]+)"', page)
    # Anchors and headings name objects where they are public: svmmap.BinnedMatrix, not
    # svmmap._binned.BinnedMatrix.
    private = [i for i in ids if re.search(r"(^|\.)_[a-z]", i)]
    assert not private, private
    assert "svmmap.BinnedMatrix" in ids
    # mkdocstrings gives a heading inside a docstring the id "<object>--<text>"; a docstring
    # line that starts with "#" would become one (Markdown) and enter the contents.
    from_docstrings = [i for i in ids if "--" in i]
    assert not from_docstrings, from_docstrings


def test_api_page_shows_no_sphinx_roles(site):
    # The docstrings are Markdown (mkdocstrings): a Sphinx role such as :class:`SVMMap` would
    # show as literal text, colons and role name included.
    text = _text((site / "api.html").read_text(encoding="utf-8"))
    roles = sorted(set(re.findall(r":(?:class|func|meth|attr|mod|data|exc|obj):", text)))
    assert not roles, roles
    # Nor private parts: base classes (private mixins) and private dataclass fields.
    assert "Bases:" not in text
    assert not re.findall(r"\b_[a-z]+=", text)


def test_site_needs_nothing_from_the_network(site):
    """No Google fonts and no script, style or font from another host: the site works offline."""
    remote = []
    for page in site.rglob("*.html"):
        if page.name.startswith("__harness"):
            continue
        text = page.read_text(encoding="utf-8")
        for tag in re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", text):
            url = re.search(r'\b(?:src|href)="([^"]*)"', tag)
            if url and re.match(r"(https?:)?//", url.group(1)) and 'rel="canonical"' not in tag:
                remote.append(f"{page.relative_to(site)}: {tag}")
        if "fonts.googleapis" in text or "fonts.gstatic" in text:
            remote.append(f"{page.relative_to(site)}: Google Fonts")
    assert not remote, "\n".join(remote[:20])
    for css in site.rglob("*.css"):
        assert not re.search(r"url\((['\"]?)(https?:)?//", css.read_text(encoding="utf-8")), css


def test_search_works_from_the_file_system(site, browser, tmp_path):
    """The README tells a reader to open site/index.html: search must answer on file:// too,
    where browsers refuse fetch() and web workers (the offline plugin inlines the index, and
    docs/javascripts/iframe-worker-local.js runs the search worker)."""
    assert (site / "search" / "search_index.js").read_text(encoding="utf-8").startswith("var __index = ")
    run = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            # Lets the page's timers and the search run before the DOM is dumped.
            "--virtual-time-budget=20000",
            "--dump-dom",
            (site / "api.html").as_uri() + "?q=eval_group",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    meta = re.search(r'<div class="md-search-result__meta">(.*?)</div>', run.stdout, re.S)
    assert meta is not None and re.fullmatch(r"\d+ matching documents?", _text(meta.group(1)).strip()), meta
    results = re.findall(r'class="md-search-result__item"><a href="([^"]+)"', run.stdout)
    pages = {urlsplit(link).path.rsplit("/", 1)[-1] for link in results}
    assert {"api.html", "ecosystem.html"} <= pages, results
