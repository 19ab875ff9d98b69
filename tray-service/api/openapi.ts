export const openApiDocument = {};
