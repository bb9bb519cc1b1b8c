import Foundation

/// A file format for an atomic store: how its whole contents become bytes and back.
///
/// Formats do no I/O; ``AtomicStore`` reads and writes the file (see ``AtomicFileWriter``),
/// so a format is testable byte by byte.
protocol AtomicStoreFileFormat: Sendable {
    /// Encodes the store's contents and identifier.
    func encode(_ contents: AtomicStoreContents, identifier: String, model: ManagedObjectModel) throws -> Data

    /// Decodes a file; throws ``PersistenceError/Code/persistentStoreOpen`` naming `path` and
    /// what is wrong when the bytes are not a valid store for `model`.
    func decode(_ data: Data, path: String, model: ManagedObjectModel) throws -> (identifier: String, contents: AtomicStoreContents)
}

extension AtomicStoreFileFormat {
    /// An error for a file that cannot be opened.
    func openError(_ path: String, _ message: String) -> PersistenceError {
        PersistenceError(.persistentStoreOpen, "The store file is not valid: \(message)", path: path)
    }

    /// The concrete entity named `name`, checked to be known to `model`.
    func entity(named name: String, in model: ManagedObjectModel, path: String, at location: String) throws -> EntityDescription {
        guard let entity = model.entitiesByName[name] else {
            throw openError(path, "\(location) names the entity \(name), which the model does not have")
        }
        return entity
    }
}
