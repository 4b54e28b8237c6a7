/** Where a merchant account stands in its onboarding (the merchants module's transitions move it). */
export type AccountStatus = 'created' | 'under_review' | 'needs_clarification' | 'activated' | 'suspended';
