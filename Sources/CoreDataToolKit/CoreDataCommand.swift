import ArgumentParser
import CoreData

/// `coredata`: inspect, query, export, import and check Core Data stores — including stores
/// written by Apple's Core Data — from the command line.
///
/// Exit status: 0 on success, 1 when the data is wrong (not a Core Data store, a corrupt store,
/// an import file that does not match the model, `check` findings), 2 when the command is
/// (an unknown option, entity or key, a malformed predicate, a missing file).
struct CoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata",
        abstract: "Inspect, query, export, import and check Core Data stores.",
        discussion: """
            Stores written by Apple's Core Data open as they are, with the model cached inside \
            them, or with --model (an .xcdatamodeld, .xcdatamodel, .momd or .mom). Commands that \
            only read open the store read-only and write nothing beside it. A PostgreSQL store \
            (a postgres:// URL) is read and written by coredata-postgres, the same commands with \
            the PostgreSQL store.

            Exit status: 0 success, 1 bad data (not a store, corrupt, import mismatch, check \
            findings), 2 bad usage (unknown option, entity or key, malformed predicate, missing file).
            """,
        subcommands: [
            InfoCommand.self, ModelCommand.self, QueryCommand.self, ExportCommand.self, ImportCommand.self,
            CheckCommand.self, MigrateCommand.self, ConvertCommand.self, HistoryCommand.self, DemoCommand.self,
        ])

    /// Runs the command, mapping every failure to one line on standard error and exit status 1 or 2
    /// (swift-argument-parser would use 64 for usage errors).
    static func main() {
        // A reader that stops early (`| head`) ends the tool as it ends `cat`, by SIGPIPE — also
        // when the parent ignored the signal (SwiftNIO programs do, and children inherit it):
        // Foundation's FileHandle traps on the write error it would get instead.
        signal(SIGPIPE, SIG_DFL)
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            Terminal.error(fullMessage(for: error))
            Foundation.exit(ToolError.Status.usage.rawValue)
        }
        do {
            var command = command
            try command.run()
        } catch let error as ToolError {
            Terminal.error("coredata: \(error.message)")
            Foundation.exit(error.status.rawValue)
        } catch let error as ExitCode {
            Foundation.exit(error.rawValue)
        } catch  where exitCode(for: error) == .success {
            // `--help`, `-h` and `help`: the parser hands back a help command whose run "fails"
            // with the help request; printing the help and exiting 0 is what was asked.
            exit(withError: error)
        } catch {
            Terminal.error("coredata: \(ToolError.describe(error))")
            Foundation.exit(ToolError.Status.data.rawValue)
        }
    }
}

/// A failure the tool reports as one line, with its exit status.
struct ToolError: Error {
    enum Status: Int32 {
        /// The data is wrong: not a store, corrupt, an import that does not match the model.
        case data = 1
        /// The command is wrong: unknown entity or key, malformed predicate, missing file.
        case usage = 2
    }

    let message: String
    let status: Status

    static func usage(_ message: String) -> ToolError { ToolError(message: message, status: .usage) }
    static func data(_ message: String) -> ToolError { ToolError(message: message, status: .data) }

    /// One line for an error from the framework: its description, without line breaks.
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        var text = nsError.localizedDescription
        if let reason = nsError.userInfo[NSLocalizedFailureReasonErrorKey] as? String, !text.contains(reason) {
            text += ": " + reason
        }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

/// Standard error and terminal checks.
enum Terminal {
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line.hasSuffix("\n") ? line : line + "\n").utf8))
    }

    static var standardErrorIsTerminal: Bool { isatty(2) != 0 }

    /// Draws a 30-column progress bar for `fraction` (0…1) on standard error, over the last one;
    /// `done` ends the line.
    static func progress(_ fraction: Float, done: Bool = false) {
        let clamped = min(max(fraction.isNaN ? 0 : fraction, 0), 1)
        let filled = Int((clamped * 30).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 30 - filled)
        let line = "\rMigrating:          [\(bar)] \(Int((clamped * 100).rounded(.down)))%" + (done ? "\n" : "")
        FileHandle.standardError.write(Data(line.utf8))
    }
}
