// exit-without-endturn.mjs HOW - a pi host that leaves a turn's container
// running: it starts `sleep 100` through the turninit operations, prints
// "running" once the command's output arrives, then (HOW "exit") calls
// process.exit(0) without endTurn(), or (HOW "kill") waits to be killed.
// Used by pi.test.mjs; same environment.
import { createTurninitBashOperations } from "../index.js";

const how = process.argv[2];
const ops = createTurninitBashOperations({
	image: process.env.PITEST_IMAGE,
	podmanArgs: ["--label", process.env.PITEST_LABEL],
});
ops.exec("echo running; sleep 100", "/", {
	onData: (d) => {
		process.stdout.write(d);
		if (how === "exit" && d.includes("running")) process.exit(0);
	},
}).then(
	() => process.exit(3),
	() => process.exit(4),
);
setTimeout(() => process.exit(5), 60000).unref();
