// Placeholder so that a layer with no sources yet still forms an object library.
