// Types of turninit-pi (index.js). BashOperations is pi's
// (@earendil-works/pi-coding-agent), repeated here so that this package needs no
// dependency.

export interface TurninitBashOptions {
	/** The sealed turninit image; run with --pull never. */
	image: string;
	/** A host directory mounted into every container; pi's cwd under it maps to containerPath. */
	workspace?: { hostPath: string; containerPath?: string; mountOptions?: string } | null;
	/** Extra `podman run` flags, placed before the image. */
	podmanArgs?: string[];
	/** turninit serve's flags, after "serve" (for example ["--audit-log", "/var/log/turninit/audit.jsonl"]). */
	serveArgs?: string[];
	/** Names taken from pi's environment and sent to turninit ("LC_*" is a prefix). */
	env?: string[];
	/** One container per call instead of one per turn. */
	perCall?: boolean;
	/** The manifest's home, mounted as a tmpfs (default "/home/agent"); null: none added. */
	home?: string | null;
	/** podman --network (default "none"); null: podman's default. */
	network?: string | null;
	/** The podman command (default "podman"). */
	podman?: string;
	/** Container name prefix (default "turninit-pi"). */
	namePrefix?: string;
	/** Called with each line turninit or podman writes on stderr. */
	onStderr?: (line: string) => void;
}

export interface TurninitBashOperations {
	exec: (
		command: string,
		cwd: string,
		options: {
			onData: (data: Buffer) => void;
			signal?: AbortSignal;
			timeout?: number;
			env?: NodeJS.ProcessEnv;
		},
	) => Promise<{ exitCode: number | null }>;
	/** Stop the turn's container; the next exec starts a new one. */
	endTurn(): Promise<void>;
	/** endTurn(), and every later exec rejects. */
	dispose(): Promise<void>;
	/** The audit log's head after each command that ended, in order (serve --audit-log). */
	auditHeads(): { container: string; id: string; head: string }[];
}

export function createTurninitBashOperations(options: TurninitBashOptions): TurninitBashOperations;
