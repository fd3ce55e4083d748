// probe.js -- the browser half of widgets/probe.py: tells Python whether the view around it can be seen.
//
// The probe draws nothing. It finds the view it sits in (the closest `.tl-view` ancestor, or its own parent)
// and reports `visible` = that element intersects the viewport AND the page is not hidden. A view in a hidden
// Lab tab, a collapsed output or scrolled away reads as not visible, and its Python side skips live redraws
// until it is shown again.

export default {
  render({ model, el }) {
    el.classList.add("tl-probe");
    el.style.cssText = "width:0;height:0;overflow:hidden";
    let inView = true;
    function report() {
      const v = inView && document.visibilityState !== "hidden";
      if (model.get("visible") !== v) {
        model.set("visible", v);
        model.save_changes();
      }
    }
    let io = null;
    // the view is attached to the page a moment after render(): look for it then
    const start = requestAnimationFrame(() => {
      const target = el.closest(".tl-view") || el.parentElement || el;
      if (typeof IntersectionObserver !== "undefined") {
        io = new IntersectionObserver((entries) => {
          for (const e of entries) inView = e.isIntersecting;
          report();
        });
        io.observe(target);
      }
    });
    document.addEventListener("visibilitychange", report);
    return () => {
      cancelAnimationFrame(start);
      document.removeEventListener("visibilitychange", report);
      if (io) io.disconnect();
    };
  },
};
