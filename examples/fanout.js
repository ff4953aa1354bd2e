// Fans shell commands out in parallel through the built-in `exec_command` tool and
// aggregates the results: lines of Rust per crate of this repository.
//
//   codemode exec examples/fanout.js        (from the repository root)

async function sh(cmd) {
  // `login: false` keeps profile scripts (and their chatter) out of the output.
  const result = await tools.exec_command({ cmd, login: false, yield_time_ms: 10000 });
  if (result.exit_code !== 0) {
    throw new Error(`\`${cmd}\` exited with ${result.exit_code}: ${result.output}`);
  }
  return result.output.trim();
}

// Every folder with a Cargo.toml is a crate.
const manifests = (await sh("ls -1 */Cargo.toml")).split("\n").filter(Boolean);
const crates = manifests.map((manifest) => manifest.split("/")[0]);

// One exec_command per crate, all at once.
const counts = await Promise.all(
  crates.map(async (crate) => {
    const files = Number(await sh(`find ${crate} -name '*.rs' -not -path '*/target/*' | wc -l`));
    const lines = Number(
      await sh(`find ${crate} -name '*.rs' -not -path '*/target/*' -exec cat {} + | wc -l`),
    );
    return { crate, files, lines };
  }),
);

counts.sort((a, b) => b.lines - a.lines);
const total = counts.reduce((sum, c) => sum + c.lines, 0);
for (const { crate, files, lines } of counts) {
  text(`${crate.padEnd(16)} ${String(files).padStart(4)} files ${String(lines).padStart(7)} lines`);
}
text(`${"total".padEnd(16)} ${String(total).padStart(19)} lines in ${counts.length} crates`);
