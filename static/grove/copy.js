// Copy buttons: each names the field it copies (data-copy). Hidden until this script runs, so
// without JavaScript the page shows only the selectable text.
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button.copy[data-copy]")) {
    const field = document.getElementById(button.dataset.copy);
    if (!field) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(field.value);
      } catch {
        // No clipboard permission (an insecure origin, an old browser): select it instead.
        field.select();
        document.execCommand("copy");
      }
      button.textContent = "Copied";
      setTimeout(() => { button.textContent = "Copy"; }, 2000);
    });
  }
});
