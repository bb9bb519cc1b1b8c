import PersistKit
