// Swagger UI start-up, kept out of the HTML so that `script-src 'self'` needs no 'unsafe-inline'.
// The page passes its settings as data- attributes on the #swagger-ui element.
(function () {
  "use strict";
  var el = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: el.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    // The default validator badge loads an image from validator.swagger.io: off.
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
})();
