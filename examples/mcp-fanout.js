// Fans 20 calls out to an MCP server at once (`server-everything`'s `echo`) and checks
// every answer came back, in order.
//
//   npm ci --prefix tests/mcp-servers
//   codemode exec --config examples/codemode.toml examples/mcp-fanout.js

const messages = Array.from({ length: 20 }, (_, i) => `message ${i}`);
const started = Date.now();
const results = await Promise.all(
  messages.map((message) => tools.mcp__everything__echo({ message })),
);
const echoes = results.map((result) => result.content[0].text);

echoes.forEach((echo, i) => {
  if (echo !== `Echo: ${messages[i]}`) {
    throw new Error(`call ${i} answered ${JSON.stringify(echo)}`);
  }
});
// Also aggregate a second tool of the same server.
const sum = await tools.mcp__everything__get_sum({ a: echoes.length, b: 22 });
text(`${echoes.length} echoes in ${Date.now() - started} ms; first: ${echoes[0]}; last: ${echoes[19]}`);
text(`get_sum: ${sum.content[0].text}`);
