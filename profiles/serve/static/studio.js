// The studio works without this file; it only saves clicks. Loaded as a file because the
// Content-Security-Policy allows no inline script.
(function () {
  "use strict";

  // A select marked data-autosubmit sends its form when it changes.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () {
      if (select.form) {
        select.form.requestSubmit ? select.form.requestSubmit() : select.form.submit();
      }
    });
  });

  // The sign-in link `profiles serve` prints carries the token after '#', which no request and
  // no server log ever sees; fill the form with it and send it.
  var login = document.getElementById("login");
  if (login && location.hash.indexOf("#token=") === 0) {
    var token = location.hash.slice(7);
    try {
      token = decodeURIComponent(token);
    } catch (error) {
      // a '%' that starts no escape (a token typed into the link by hand) is the token's own
    }
    history.replaceState(null, "", location.pathname + location.search);
    if (token) {
      login.querySelector("input[name=token]").value = token;
      login.requestSubmit ? login.requestSubmit() : login.submit();
    }
  }

  // A copy button beside each prompt.
  document.querySelectorAll("pre.prompt").forEach(function (pre) {
    if (!navigator.clipboard) {
      return;
    }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(pre.textContent).then(function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = "Copy"; }, 1500);
      });
    });
    pre.parentNode.insertBefore(button, pre);
  });
})();
