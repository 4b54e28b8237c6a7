import fs from 'node:fs';
import { expect, it } from 'vitest';
import { CallInTransactionError } from '../../src/db/db.js';
import { toConnectorPayment } from '../../src/modules/payments/payments.model.js';
import type { PaymentRow } from '../../src/modules/payments/payments.repo.js';
import { createHttpSender } from '../../src/modules/webhooks/http-sender.js';
import { describeEachDatabase } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';
import { createPayment } from '../helpers/payments.js';
import { TestReceiver } from '../helpers/webhook-receiver.js';

/**
 * Calls that leave the process — a payment provider, a webhook receiver, DNS, the file system —
 * refuse to run inside a database transaction: each is tried inside one (it must throw and do
 * nothing) and outside (it must work). The whole suite runs with this guard on.
 */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

describeEachDatabase('calls that leave the process, inside a transaction', (harness) => {
  const inTransaction = <T>(work: () => Promise<T>) => harness().container.db.transaction(async () => work());

  it('a connector call refuses, and the payment is untouched', async () => {
    const merchant = await harness().merchant();
    const { paymentId } = await createPayment(harness(), merchant);
    const { container } = harness();
    const payment = (
      await container.db.query<PaymentRow>('SELECT * FROM payments WHERE id = $1', [paymentId])
    )[0]!;
    const connector = await container.connectors.forPayment(payment);
    const view = toConnectorPayment(payment, container.config.publicUrl);
    await expect(inTransaction(() => connector.status(view))).rejects.toBeInstanceOf(CallInTransactionError);
    await expect(inTransaction(() => connector.initiate(view))).rejects.toBeInstanceOf(
      CallInTransactionError,
    );
    // The reconciler's call is refused the same way, and leaves the payment as it was.
    const sync = container.jobs.paymentSync;
    await expect(inTransaction(() => sync.syncOne(payment))).rejects.toBeInstanceOf(CallInTransactionError);
    const after = (
      await container.db.query<PaymentRow>('SELECT * FROM payments WHERE id = $1', [paymentId])
    )[0]!;
    expect(after).toEqual(payment);
    // Outside a transaction the same calls work.
    await expect(connector.status(view)).resolves.toMatchObject({ outcome: 'not_started' });
    await expect(sync.syncOne(payment)).resolves.toMatchObject({ id: paymentId, status: 'created' });
  });

  it('a webhook send refuses before connecting', async () => {
    const receiver = await TestReceiver.start();
    try {
      const send = createHttpSender(harness().container.resolver, harness().container.db);
      const request = {
        url: receiver.url(),
        mode: 'test' as const,
        headers: {},
        body: '{}',
        timeoutMs: 2_000,
      };
      await expect(inTransaction(() => send(request))).rejects.toBeInstanceOf(CallInTransactionError);
      expect(receiver.received).toHaveLength(0);
      expect((await send(request)).statusCode).toBe(200);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('a DNS lookup refuses', async () => {
    const { resolver } = harness().container;
    await expect(inTransaction(() => resolver.lookup('localhost'))).rejects.toBeInstanceOf(
      CallInTransactionError,
    );
    expect((await resolver.lookup('localhost')).length).toBeGreaterThan(0);
  });

  it('a KYC file write refuses, and no file is left', async () => {
    const partner = await harness().partner();
    const created = await harness().request('POST', '/v1/api-portal/merchants/', {
      auth: partner,
      json: proprietorBody(),
    });
    expect(created.statusCode, created.body).toBe(200);
    const merchantId = created.json().data.id as string;
    const { container } = harness();
    const { documents } = container.services;
    const principal = {
      accountId: partner.id,
      accountKind: 'partner' as const,
      accountName: 'Partner',
      mode: 'test' as const,
      apiKey: partner.credentials.api_key,
    };
    const upload = { documentType: 'pan', fileName: 'pan.pdf', content: PDF };
    const before = fs.existsSync(documents.directory) ? fs.readdirSync(documents.directory).length : 0;
    // The service run on a transaction's handle (as an atomic Idempotency-Key request passes it): its
    // own statements run in the transaction, and the file write must refuse.
    await expect(
      container.db.transaction((tx) => documents.upload(principal, merchantId, upload, {}, tx)),
    ).rejects.toBeInstanceOf(CallInTransactionError);
    const after = fs.existsSync(documents.directory) ? fs.readdirSync(documents.directory).length : 0;
    expect(after).toBe(before);
    await expect(documents.upload(principal, merchantId, upload)).resolves.toMatchObject({
      document_type: 'pan',
    });
  });
});
