// The retrylab binary of this platform: it comes in one of the optional
// dependencies @retrylab/<os>-<cpu> (the esbuild pattern: npm installs the
// one whose os and cpu fields match, no postinstall, no download).
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export const platforms = ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64", "win32-arm64", "win32-x64"];

/** The path of the retrylab binary: $RETRYLAB_BIN when set, else the
 * platform package's. Throws with what to do when neither is there. */
export function binaryPath() {
  if (process.env.RETRYLAB_BIN) return process.env.RETRYLAB_BIN;
  const key = `${process.platform}-${process.arch}`;
  const exe = process.platform === "win32" ? "retrylab.exe" : "retrylab";
  if (!platforms.includes(key)) {
    throw new Error(`retrylab: no binary for ${key} (there are: ${platforms.join(", ")}); build one with 'go build ./cmd/retrylab' and set RETRYLAB_BIN`);
  }
  try {
    return require.resolve(`@retrylab/${key}/bin/${exe}`);
  } catch {
    throw new Error(
      `retrylab: the package @retrylab/${key}, which holds the binary for this platform, is not installed: ` +
        `it is an optional dependency of retrylab, so install without --omit=optional / --no-optional ` +
        `(and with the same version as retrylab), or set RETRYLAB_BIN`,
    );
  }
}
