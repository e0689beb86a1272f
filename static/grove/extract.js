// Fills the node page's Extract form (start/end) from a selection inside the words as stored. The form
// works without this: the offsets can be typed. Offsets count code points, as Python does.
document.addEventListener("selectionchange", () => {
  const body = document.getElementById("node-source");
  const form = document.getElementById("extract-form");
  const selection = document.getSelection();
  if (!body || !form || !selection || !selection.rangeCount) return;
  const range = selection.getRangeAt(0);
  if (range.collapsed || !body.contains(range.startContainer) || !body.contains(range.endContainer)) return;
  const before = document.createRange();
  before.setStart(body, 0);
  before.setEnd(range.startContainer, range.startOffset);
  const start = [...before.toString()].length;
  form.elements.start.value = start;
  form.elements.end.value = start + [...range.toString()].length;
});
