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
    let stop = null;
    // the view is attached to the page a moment after render(): look for it then
    const start = requestAnimationFrame(() => {
      stop = watchVisibility(model, el.closest(".tl-view") || el.parentElement || el);
    });
    return () => {
      cancelAnimationFrame(start);
      if (stop) stop();
    };
  },
};
