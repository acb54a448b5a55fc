// Small helpers of the dashboard; every page works without them.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // Copy buttons: data-copy names the input whose value is copied.
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const input = document.getElementById(button.dataset.copy);
      if (!input) return;
      try {
        await navigator.clipboard.writeText(input.value);
      } catch {
        input.select();
        document.execCommand("copy");
      }
      const label = button.textContent;
      button.textContent = "Copied";
      setTimeout(() => { button.textContent = label; }, 1500);
    });
  }
  // A checkbox with data-disables turns the named field off while it is ticked
  // (infinite ↔ quantity, immortal ↔ expiry, infinite ↔ billing cycles).
  for (const box of document.querySelectorAll("input[data-disables]")) {
    const target = document.getElementById(box.dataset.disables);
    if (!target) continue;
    const sync = () => {
      target.disabled = box.checked;
      target.closest(".field")?.classList.toggle("off", box.checked);
    };
    box.addEventListener("change", sync);
    sync();
  }
});
