// Site search from file:// without the network.
//
// The theme runs its search index in a web worker, and browsers refuse `new Worker()` for a
// file:// URL. mkdocs-material's offline plugin inlines the index in search/search_index.js and
// would load a Worker replacement from a CDN, which an offline reader cannot reach; mkdocs.yml
// names this file instead (the plugin adds its own only when no polyfill mentions
// "iframe-worker"). On file:// the worker's script runs here in a hidden iframe, behind the part
// of the Worker interface the theme uses: postMessage, and "message" events. Over http(s) the
// browser's own Worker is left alone.
(function () {
  "use strict";
  if (location.protocol !== "file:") {
    return;
  }

  class FrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.pending = [];
      this.loaded = false;
      const frame = document.createElement("iframe");
      frame.hidden = true;
      (document.body || document.documentElement).appendChild(frame);
      this.frame = frame;
      // An about:blank frame shares this page's origin, so its globals can be set from here.
      const scope = frame.contentWindow;
      this.scope = scope;
      // The worker's replies arrive as this object's "message" events, asynchronously as from
      // a real worker.
      scope.postMessage = (data) => {
        setTimeout(() => this.emit(data), 0);
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, document.baseURI).href;
      script.onload = () => {
        this.loaded = true;
        for (const data of this.pending.splice(0)) {
          this.deliver(data);
        }
      };
      script.onerror = () => {
        this.dispatchEvent(new ErrorEvent("error", { message: "cannot load " + script.src }));
      };
      scope.document.head.appendChild(script);
    }

    postMessage(data) {
      if (this.loaded) {
        this.deliver(data);
      } else {
        this.pending.push(data);
      }
    }

    deliver(data) {
      this.scope.dispatchEvent(new this.scope.MessageEvent("message", { data: data }));
    }

    emit(data) {
      const event = new MessageEvent("message", { data: data });
      if (typeof this.onmessage === "function") {
        this.onmessage(event);
      }
      this.dispatchEvent(event);
    }

    terminate() {
      this.frame.remove();
    }
  }

  window.Worker = FrameWorker;
})();
