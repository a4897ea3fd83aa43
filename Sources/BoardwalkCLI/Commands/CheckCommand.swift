import Boardwalk

enum CheckCommand: Command {
    static let name = "check"
    static let summary = "Verify the store's integrity"
    static let usage = "boardwalk check [--db DIR]"
    static let options = [databaseOption]
    static let discussion = """
        Reads the whole store: every record must decode, every index entry must point to an existing event
        and back, and the counters must match. Prints what it checked, or each problem found (up to 100).
        Safe while another process appends.

        Exit status: 0 when the store is sound, 1 when a problem was found (or the store cannot be opened).

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let store = try openStore(invocation.database(arguments), readOnly: true, notes: invocation)
        let report: CheckReport
        do {
            report = try store.check()
        } catch {
            throw RuntimeError("the check could not finish: \(error)")
        }
        var text = report.description
        if !text.hasSuffix("\n") { text += "\n" }
        if report.isOK {
            invocation.out(text)
            return ExitCode.success
        }
        invocation.err(text)
        return ExitCode.failure
    }
}
