"""`profiles serve` and `profiles mcp`: a folder's personas and the prompt store over HTTP and MCP,
with a web studio for the people who read personas and move labels without editing YAML.

An optional extra (`pip install "agent-profiles[serve]"`): FastAPI, uvicorn and the MCP SDK are
imported by these modules only, never by `import profiles`; the command line imports this
package inside the commands that need it.

The server is a new door into personas and the store, so it is shut by default: it binds
127.0.0.1, every write needs a bearer token, the studio's forms carry a CSRF token and are
refused from another origin, every page is escaped and sent under a strict
Content-Security-Policy, persona paths stay inside the served folder, bodies and values are
bounded, and secrets are masked in every answer as `explain` masks them.

Modules, each importing only those listed beside or below it:

```
server            runs the application under uvicorn; `profiles serve` calls it
app               assembles the application: routes, middleware, error pages, the MCP mount
api store_api studio mcp_prompts   the JSON API (personas, store), the HTML pages, the MCP prompts
deps state                what the routes share: the write gate, the server's parts
personas store_access     what all of them show: a folder's personas and a prompt store, checked
security etag diffs settings   tokens, CSRF, headers and limits; ETags; side-by-side diffs; settings
```
"""

from __future__ import annotations

__all__: list[str] = []
