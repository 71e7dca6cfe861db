// Sidequest's one script, progressive enhancement only: every page works without it.
// It adds live character counters to fields with data-max and copy buttons to [data-copy].
(function () {
  "use strict";
  function chars(s) { return Array.from(s).length; }
  function counter(el) {
    var field = document.getElementById(el.getAttribute("data-for"));
    if (!field) { return; }
    var max = parseInt(field.getAttribute("data-max"), 10);
    function update() {
      var n = chars(field.value);
      el.textContent = n + " / " + max;
      el.classList.toggle("over", n > max);
    }
    field.addEventListener("input", update);
    update();
  }
  function copyButton(button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target || !navigator.clipboard) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.value !== undefined ? target.value : target.textContent;
      navigator.clipboard.writeText(text).then(function () {
        button.setAttribute("data-done", "1");
        button.textContent = button.getAttribute("data-copied") || button.textContent;
      }, function () {});
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".counter[data-for]").forEach(counter);
    document.querySelectorAll("button[data-copy]").forEach(copyButton);
  });
})();
