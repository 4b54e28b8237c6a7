import { randomBytes } from 'node:crypto';
import { type Db, isUniqueViolation } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { unixSeconds } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { type Page, pageRequest, toPage } from '../../domain/pagination.js';
import type { Scope } from '../../domain/scope.js';
import type { MerchantsService } from './merchants.service.js';
import type { VpaRow, VpasRepo } from './vpas.repo.js';

export interface Vpa {
  id: string;
  entity: 'vpa';
  merchant_id: string;
  address: string;
  descriptor: string;
  status: VpaRow['status'];
  created_at: number;
}

function toVpa(row: VpaRow): Vpa {
  return {
    id: row.id,
    entity: 'vpa',
    merchant_id: row.account_id,
    address: row.address,
    descriptor: row.descriptor,
    status: row.status,
    created_at: unixSeconds(row.created_at),
  };
}

export const DESCRIPTOR_PATTERN = /^[a-z0-9]{3,20}$/;
const SUFFIX_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const ATTEMPTS = 5;

/** Six characters from 31 unambiguous ones: about 887 million suffixes per descriptor. */
export function randomSuffix(): string {
  return [...randomBytes(6)].map((byte) => SUFFIX_ALPHABET[byte % SUFFIX_ALPHABET.length]).join('');
}

/** The default descriptor: the display name's letters and digits, or `merchant` if too few. */
export function descriptorFrom(displayName: string): string {
  const cleaned = displayName
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 20);
  return cleaned.length >= 3 ? cleaned : 'merchant';
}

/**
 * UPI VPAs `<descriptor>.<suffix>@<handle>`. Uniqueness is the database's unique index; a
 * collision (two requests drawing the same suffix) is retried with a new suffix.
 */
export function createVpasService(deps: {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  handle: string;
  merchants: MerchantsService;
  repo: VpasRepo;
  suffix?: () => string;
}) {
  const { db, clock, ids, handle, merchants, repo } = deps;
  const suffix = deps.suffix ?? randomSuffix;
  const addressPattern = new RegExp(`^[a-z0-9]{3,20}\\.[a-z0-9]{6}@${handle}$`);

  return {
    async generate(
      scope: Scope,
      merchantId: string,
      input: { descriptor?: string },
      on: Db = db,
    ): Promise<Vpa> {
      await merchants.owned(on, scope, merchantId);
      for (let attempt = 1; ; attempt++) {
        try {
          return await on.transaction(async (tx) => {
            const profile = await merchants.owned(tx, scope, merchantId, true);
            if (profile.status === 'suspended') {
              throw new KoshError('state_conflict', 'A suspended merchant cannot get a new VPA.');
            }
            const descriptor = input.descriptor ?? descriptorFrom(profile.display_name);
            const address = `${descriptor}.${suffix()}@${handle}`;
            if (!addressPattern.test(address)) throw new Error(`generated VPA '${address}' is malformed`);
            const row = await repo.insert(tx, {
              id: ids.next('vpa'),
              account_id: profile.account_id,
              partnerId: profile.partner_id,
              mode: profile.mode,
              address,
              descriptor,
              status: profile.status === 'activated' ? 'active' : 'pending',
              createdAt: clock.now(),
            });
            return toVpa(row);
          });
        } catch (error) {
          if (!isUniqueViolation(error, 'merchant_vpas_address_key') || attempt >= ATTEMPTS) throw error;
        }
      }
    },

    async list(
      scope: Scope,
      merchantId: string,
      query: { limit?: number; cursor?: string },
    ): Promise<Page<Vpa>> {
      const profile = await merchants.owned(db, scope, merchantId);
      const page = pageRequest('vpa', query);
      const rows = await repo.list(db, profile.account_id, profile.mode, page);
      return toPage(rows, page.limit, toVpa);
    },
  };
}

export type VpasService = ReturnType<typeof createVpasService>;
