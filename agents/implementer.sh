#!/usr/bin/env bash
# Example implementer for `tugcode run`: wires any agent CLI that reads a prompt on stdin.
#
#   TUG_AGENT_CMD="my-agent --non-interactive" \
#     tugcode run <plan> --implementer "bash /abs/path/to/agents/implementer.sh"
#
# tugcode runs it once per substep and then once per step (TUG_STEP=step-4-1, step-4-2, then step-4), inside
# the step's worktree, with that (sub)step's brief as JSON on stdin and in the file $TUG_STEP_JSON ({plan_path, step_anchor, title, attempt, commit_message, references,
# depends_on, items: [{kind, ordinal, text, status}], substeps, previous_failures}), and TUG_WORKTREE,
# TUG_ATTEMPT, TUG_PLAN, TUG_STEP set. Exit 0 means "done"; anything else fails the attempt.
set -euo pipefail

: "${TUG_WORKTREE:?run me from tugcode run}"
: "${TUG_AGENT_CMD:?set TUG_AGENT_CMD to the agent command that reads a prompt on stdin}"
brief="${TUG_STEP_JSON:-/dev/stdin}"

# The prompt: the step, its open items as a task list, earlier failures, the confinement rule.
prompt="$(node -e '
const b = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const out = [`Implement step ${b.step_anchor} "${b.title}" of the plan ${b.plan_path} (attempt ${b.attempt}).`,
  `Work only inside ${process.env.TUG_WORKTREE}; do not commit, and do not run tugcode state commands.`, "", "Items:"];
const walk = (s) => { for (const i of s.items) if (i.status === "open" || i.status === "in_progress")
  out.push(`- [${s.step_anchor} ${i.kind} ${i.ordinal}] ${i.text}`); s.substeps.forEach(walk); };
walk(b);
if (b.references) out.push("", "References: " + b.references);
for (const f of b.previous_failures) out.push("", `Attempt ${f.attempt} failed: ${f.reason}`);
process.stdout.write(out.join("\n") + "\n");
' "$brief")"

report="$(mktemp)"
trap 'rm -f "$report"' EXIT
cd "$TUG_WORKTREE"
status=0
printf '%s' "$prompt" | $TUG_AGENT_CMD >"$report" 2>&1 || status=$?

# The agent's final output becomes the step's coder_report artifact (best effort: a lost claim refuses it).
tugcode state artifact "$TUG_PLAN" "$TUG_STEP" --worktree "$TUG_WORKTREE" --attempt "$TUG_ATTEMPT" \
  --kind coder_report --summary "agent exited $status" --content-file "$report" --json >/dev/null || true
cat "$report"
exit "$status"
