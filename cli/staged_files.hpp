#pragma once
// parasim::cli staged files — the temporary files an unfinished command has written (an
// output staged beside its target, ".NAME.parasim-XXXXXX", and the backup of a file being
// replaced), removed when SIGINT, SIGTERM or SIGHUP ends the process, so that an interrupted
// `simulate --json r.json --trace t.json` leaves nothing behind. The handler is installed at a
// registration where it is not already in place (a signal the process ignores stays ignored),
// and after removing the files it restores the action it replaced and re-raises the signal: the
// default action ends the process, so the exit status says which signal ended the command.
// Paths live in fixed slots and are removed with unlink, so the handler does only
// async-signal-safe work; past kStagedSlots files at once, a path is simply not covered (the
// command's own clean-up still removes it).
//
// Limit: a signal in the moment between the renames of a multi-file commit (commit_outputs)
// leaves the files renamed so far new and the others old, and their backups removed: the
// all-or-none promise holds for failures, not for a signal inside that window. SIGPIPE is
// ignored by main(), so a closed pipe is a write error with a full roll-back instead.

#include <string>

namespace parasim::cli {

inline constexpr int kStagedSlots = 64;

// Registers `path` for removal on a signal; returns its slot (or -1 when none is free or the
// path is too long to keep).
int register_staged_file(const std::string& path);
// Forgets a slot (the file was renamed into place or removed); -1 is ignored.
void release_staged_file(int slot);

}  // namespace parasim::cli
