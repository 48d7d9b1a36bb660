// Lays out the npm packages of retrylab for `npm pack` (scripts/dist.sh):
//
//   node npm/build.mjs --binary PATH --goos linux --goarch amd64 --version V --out DIR
//       DIR/linux-x64: @retrylab/linux-x64, the binary in bin/, "os": ["linux"], "cpu": ["x64"]
//   node npm/build.mjs --main --version V --out DIR
//       DIR/retrylab: npm/retrylab with its version and its optionalDependencies set to V
//
// The esbuild pattern: the main package depends optionally on every
// platform package at the same version; npm installs only the one whose
// os and cpu match. No install scripts anywhere.
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const { values: a } = parseArgs({
  options: {
    binary: { type: "string" },
    goos: { type: "string" },
    goarch: { type: "string" },
    version: { type: "string" },
    out: { type: "string" },
    main: { type: "boolean" },
  },
});
if (!a.version || !a.out) throw new Error("build.mjs: --version and --out are required");
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(a.version)) throw new Error(`build.mjs: ${a.version} is not a semver version`);

const main = JSON.parse(readFileSync(join(here, "retrylab", "package.json"), "utf8"));

if (a.main) {
  const dir = join(a.out, "retrylab");
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(here, "retrylab"), dir, { recursive: true });
  main.version = a.version;
  for (const k of Object.keys(main.optionalDependencies)) main.optionalDependencies[k] = a.version;
  writeFileSync(join(dir, "package.json"), JSON.stringify(main, null, 2) + "\n");
  chmodSync(join(dir, "bin", "retrylab.js"), 0o755);
} else {
  const os = { linux: "linux", darwin: "darwin", windows: "win32" }[a.goos];
  const cpu = { amd64: "x64", arm64: "arm64" }[a.goarch];
  if (!os || !cpu || !a.binary) throw new Error(`build.mjs: --binary and a known --goos/--goarch, got ${a.goos}/${a.goarch}`);
  const name = `@retrylab/${os}-${cpu}`;
  if (!(name in main.optionalDependencies)) throw new Error(`build.mjs: ${name} is not in npm/retrylab's optionalDependencies`);
  const dir = join(a.out, `${os}-${cpu}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  const exe = os === "win32" ? "retrylab.exe" : "retrylab";
  copyFileSync(a.binary, join(dir, "bin", exe));
  chmodSync(join(dir, "bin", exe), 0o755);
  const pkg = {
    name,
    version: a.version,
    description: `The retrylab binary for ${os} ${cpu} (installed through the retrylab package)`,
    homepage: main.homepage,
    repository: main.repository,
    os: [os],
    cpu: [cpu],
    files: ["bin"],
    preferUnplugged: true,
  };
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  writeFileSync(join(dir, "README.md"), `# ${name}\n\nThe retrylab binary for ${os} ${cpu}. Install \`retrylab\`, not this package: it depends on this one optionally.\n`);
}
