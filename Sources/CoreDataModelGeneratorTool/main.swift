import CoreDataModelGeneratorKit
import Foundation

// The executable the CoreDataModelGenerator build plugin runs:
//   CoreDataModelGeneratorTool <module> <output file> <source file>...
// It writes the accessors of the sources' @NSManaged declarations to the output file, or prints
// each declaration it cannot support as `file:line: error: …` and fails the build.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, let module = arguments.first else {
    FileHandle.standardError.write(Data("usage: CoreDataModelGeneratorTool <module> <output> <source>...\n".utf8))
    exit(2)
}
let output = URL(fileURLWithPath: arguments.dropFirst().first ?? "")
var sources: [(path: String, text: String)] = []
for path in arguments.dropFirst(2) {
    do {
        sources.append((path, try String(contentsOfFile: path, encoding: .utf8)))
    } catch {
        FileHandle.standardError.write(Data("\(path): error: cannot read: \(error)\n".utf8))
        exit(1)
    }
}
switch AccessorGenerator.generate(module: module, sources: sources) {
case .success(let text):
    do {
        // Unchanged output keeps its date, so nothing that depends on it rebuilds.
        if (try? String(contentsOf: output, encoding: .utf8)) != text {
            try text.write(to: output, atomically: true, encoding: .utf8)
        }
    } catch {
        FileHandle.standardError.write(Data("\(output.path): error: cannot write: \(error)\n".utf8))
        exit(1)
    }
case .failure(let errors):
    FileHandle.standardError.write(Data((errors.description + "\n").utf8))
    exit(1)
}
