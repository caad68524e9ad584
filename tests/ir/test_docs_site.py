"""The documentation site: built in strict mode, opened in a real headless browser.

The site is built from mkdocs.yml into a temporary directory (``mkdocs build --strict``: any
warning, such as a broken link or a docstring mkdocstrings cannot parse, fails the build),
served over HTTP on localhost, and loaded by Chromium: the API page must render the reference
generated from the docstrings, the search index must load and answer a query, and no internal
link of any page may point to a missing file or anchor.

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
<iframe id="f" src="api.html?q=eval_group" width="1200" height="900"></iframe>
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
    (site / "__harness.html").write_text(HARNESS)
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
        if page.name == "__harness.html":
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
