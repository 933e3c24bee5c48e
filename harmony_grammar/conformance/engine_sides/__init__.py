"""The engine side of the engine adapters: scripts run in each engine's own environment.

Each module here is a script run as ``python <file>`` by the engine's python (SGLang's or
vLLM's, under ``.engines/``): it imports only the standard library and the engine, never
``harmony_grammar`` (whose dependencies those environments lack). It speaks the line
protocol of :func:`harmony_grammar.conformance.oracle.serve`: a first line
``{"profile": "<engine>-<version>"}``, then one answer per request line, ``{"response":
...}``, ``{"unsupported": why}`` or ``{"error": why}``. A request is one generation,
``{"tokens", "text", "tools", "path"}``; a response is the reply the engine's own code makes
of it, ``{"content", "reasoning", "tool_calls": [{"name", "arguments"}]}``.
"""
