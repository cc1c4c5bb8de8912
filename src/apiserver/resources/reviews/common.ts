/** What every review resource shares: created and answered at once, never stored or listed. */
export const reviewCommon = {
  version: 'v1',
  shortNames: [],
  categories: [],
  verbs: ['create'],
  statusSubresource: false,
  fieldLabels: [],
  fields: () => ({}),
  columns: [],
  nameColumn: true,
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  returnDeletedObject: false,
} as const;
