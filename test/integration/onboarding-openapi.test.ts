import SwaggerParser from '@apidevtools/swagger-parser';
import { expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/harness.js';

describeEachDatabase('api-portal in the OpenAPI document', (harness) => {
  it('documents every onboarding endpoint in a valid OpenAPI 3.1 document', async () => {
    const response = await harness().request('GET', '/v1/openapi.json');
    expect(response.statusCode).toBe(200);
    const document = response.json();
    await SwaggerParser.validate(structuredClone(document));
    const paths = Object.keys(document.paths);
    for (const path of [
      '/v1/api-portal/business-categories/',
      '/v1/api-portal/merchants/',
      '/v1/api-portal/merchants/{mid}/',
      '/v1/api-portal/merchants/bank-details/{mid}/',
      '/v1/api-portal/merchants/kyc-document/{mid}/',
      '/v1/api-portal/merchants/{mid}/kyc-documents/',
      '/v1/api-portal/generate-vpa/{mid}/',
      '/v1/api-portal/merchants/{mid}/vpas/',
      '/v1/api-portal/merchants/{mid}/keys/',
      '/v1/api-portal/merchants/{mid}/methods/',
    ]) {
      expect(paths).toContain(path);
    }
    const upload = document.paths['/v1/api-portal/merchants/kyc-document/{mid}/'].post;
    expect(upload.responses['413']).toBeDefined();
    const parts = upload.requestBody.content['multipart/form-data'].schema.properties;
    expect(parts.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(parts.document_type.enum).toContain('gst_certificate');
  });
});
